import { SIGNING_ALGS } from '../oauth/keys/signing-algorithms.js';
import { isoDate, migrationName, oneOf, scopeList, uuid, ValueCheck, wholeNumber } from './flag-values.js';

/** The states `jobs:list` can show. */
export const JOB_LIST_STATES = ['failed', 'waiting', 'scheduled', 'active', 'completed'] as const;

export interface FlagSpec {
  /** Placeholder for the value in the usage line (`U`); absent for a switch that takes none. */
  value?: string;
  /** One line for the command's help. */
  description: string;
  required?: boolean;
  /** May be given several times; the command gets a list. */
  repeatable?: boolean;
  check?: ValueCheck;
  /** Former names of this flag: still accepted, with a warning on stderr, so operators' scripts keep working. */
  aliases?: string[];
}

/** What a command accepts and how it is explained: everything the CLI knows before it opens the database. */
export interface CommandSpec {
  /** One line for the list of commands. */
  summary: string;
  flags: Record<string, FlagSpec>;
  /** The arguments after `npm run cli --` of a typical call. */
  example: string;
  /** Further lines of explanation for the command's help. */
  notes?: string[];
}

const PASSWORD_STDIN_NOTE =
  'The password can come from standard input (--password-stdin: its first line), which keeps it out of the shell history and the process list.';

const password = (required: boolean): Record<string, FlagSpec> => ({
  password: { value: 'P', description: 'Password: 10 characters or more, not containing the username or e-mail address', required },
  'password-stdin': { description: 'Read the password from standard input instead of --password' },
});

/** `--user U`: the one flag that names an existing user, in every command (formerly `--username` or `--owner`). */
const user = (description: string, formerly: 'username' | 'owner', required = true): Record<string, FlagSpec> => ({
  user: { value: 'U', description, required, aliases: [formerly] },
});

const commands = {
  'users:list': {
    summary: 'Every user account: id, username, name, e-mail address, state (never a password hash)',
    flags: {},
    example: 'users:list',
  },
  'users:create': {
    summary: 'Creates a user account, with the same rules as the sign-up page; its e-mail address counts as verified',
    flags: {
      username: {
        value: 'U',
        description: 'Username: 2 to 39 letters, digits, "_", "." or "-", starting with a letter or digit',
        required: true,
      },
      email: { value: 'E', description: 'E-mail address', required: true },
      name: { value: 'N', description: 'Full name, as shown to others', required: true },
      ...password(true),
    },
    example: `users:create --username ada --email ada@example.com --name "Ada Lovelace" --password-stdin < ada-password.txt`,
    notes: [PASSWORD_STDIN_NOTE],
  },
  'users:set-password': {
    summary: "Sets a user's password and signs them out everywhere",
    flags: { ...user('Username of the account', 'username'), ...password(true) },
    example: `users:set-password --user ada --password-stdin`,
    notes: [PASSWORD_STDIN_NOTE],
  },
  'users:set-email': {
    summary: "Sets a user's e-mail address (one who lost access to the old one), verified at once; the old address is told",
    flags: {
      ...user('Username of the account', 'username'),
      email: { value: 'E', description: 'New e-mail address', required: true },
    },
    example: 'users:set-email --user ada --email ada@example.org',
    notes: [
      'The operator vouches for the new address (as an administrator does on GitLab): no link is mailed to it, and it counts as verified.',
    ],
  },
  'users:verify-email': {
    summary:
      "Marks a user's e-mail address verified, as following the mailed link would (they may then create applications, tokens and organizers)",
    flags: user('Username of the account', 'username'),
    example: 'users:verify-email --user ada',
  },
  'users:block': {
    summary: 'Blocks a user: their sessions and tokens stop working at once',
    flags: user('Username of the account', 'username'),
    example: 'users:block --user mallory',
  },
  'users:unblock': {
    summary: 'Lets a blocked user sign in again',
    flags: user('Username of the account', 'username'),
    example: 'users:unblock --user mallory',
  },
  'users:reset-second-factor': {
    summary: "Removes a user's second factors (authenticator app, recovery codes, passkeys) and tells them by e-mail",
    flags: { user: { value: 'U', description: 'Username of the account', required: true } },
    example: 'users:reset-second-factor --user ada',
    notes: [
      'For a user who lost their second factor and proved who they are some other way. Their sessions stay (as GitLab does); to end them too, set a new password with users:set-password.',
      'Organizers that require a second factor hold the user back until they set up a new one.',
    ],
  },
  'tokens:create': {
    summary: 'Creates a personal access token for a user and prints it (shown this once)',
    flags: {
      user: { value: 'U', description: 'Username of the token owner', required: true },
      name: { value: 'N', description: 'What the token is for', required: true },
      scopes: { value: '"api"', description: 'Space-separated scopes: api or read_api (default api)', check: scopeList },
      'expires-at': { value: 'DATE', description: 'Expiry: a day such as 2027-01-31 (midnight UTC) or an ISO 8601 time', check: isoDate },
    },
    example: 'tokens:create --user ada --name deploy-script --scopes "read_api" --expires-at 2027-01-31',
  },
  'tokens:list': {
    summary: "A user's personal access tokens (never the tokens themselves)",
    flags: { user: { value: 'U', description: 'Username of the token owner', required: true } },
    example: 'tokens:list --user ada',
  },
  'tokens:revoke': {
    summary: 'Revokes a personal access token: the next request with it fails',
    flags: { id: { value: 'ID', description: 'Id of the token, as tokens:list prints it', required: true } },
    example: 'tokens:revoke --id 3f1c…',
  },
  'apps:list': {
    summary: 'OAuth applications with their Application ID (client id), owner, redirect URIs and scopes; never a secret',
    flags: user('Only the applications of this user', 'owner', false),
    example: 'apps:list --user ada',
  },
  'apps:create': {
    summary: 'Registers an OAuth application and prints its client id and, for a confidential one, its secret (shown this once)',
    flags: {
      type: {
        value: 'T',
        description:
          'confidential (a server-side app with a secret, the default) or public (single-page, native or CLI app: no secret, PKCE only)',
        check: oneOf(['confidential', 'public']),
      },
      ...user('Username of the owner, whose dashboard lists the application', 'owner'),
      name: { value: 'N', description: 'Name shown to users on the consent page', required: true },
      'redirect-uri': {
        value: 'URI',
        description: 'Redirect URI; repeat the flag for several, up to 10',
        required: true,
        repeatable: true,
      },
      scopes: { value: '"openid api …"', description: 'Space-separated scopes the application may ask for', check: scopeList },
      'post-logout-redirect-uri': {
        value: 'URI',
        description: 'Where the application may send users after signing them out; repeat the flag for several (optional)',
        repeatable: true,
      },
      'client-uri': { value: 'URL', description: 'Homepage, linked on the consent page: https, or http for localhost (optional)' },
      'logo-uri': { value: 'URL', description: 'https address of a square logo, shown at 48 × 48 on the consent page (optional)' },
      description: { value: 'TEXT', description: 'What the application does, shown on the consent page; up to 500 characters (optional)' },
      'id-token-signed-response-alg': {
        value: 'ALG',
        description: `Signing algorithm of its id_tokens and JWT access tokens: ${SIGNING_ALGS.join(', ')} (default RS256)`,
      },
      'access-token-format': { value: 'F', description: 'opaque (the default) or jwt (RFC 9068, verified with the JWKS)' },
      'subject-type': {
        value: 'S',
        description: "public (the user's id as sub, the default) or pairwise (a sub of its own; all redirect URIs on one host)",
      },
      'backchannel-logout-uri': {
        value: 'URI',
        description: 'Where Agora posts a logout token when a session it signed a user in with ends (optional)',
      },
      'backchannel-logout-session-required': {
        description: 'Record that the application needs sid in logout tokens (Agora always sends it)',
      },
      'token-endpoint-auth-method': {
        value: 'M',
        description:
          'How a confidential application authenticates: client_secret_basic (the default), client_secret_post or private_key_jwt (with --jwks-uri); a public one: none',
      },
      'jwks-uri': { value: 'URL', description: 'With private_key_jwt: the https address of its public keys (a JWK Set)' },
    },
    example: 'apps:create --user ada --name "Example client" --redirect-uri http://localhost:4000/callback --scopes "openid profile api"',
    notes: [
      'Scopes default to "openid profile email api read_api".',
      'Every value is checked as the dashboard checks it; each problem names its flag.',
      'The type cannot be changed later. A public client may also use http://127.0.0.1/… redirect URIs (any port) and private-use schemes such as com.example.app:/callback.',
    ],
  },
  'apps:rotate-secret': {
    summary: "Replaces a confidential application's client secret and prints the new one; the old one stops working at once",
    flags: {
      id: { value: 'ID', description: 'Application ID as the dashboard and apps:list show it (the internal id works too)', required: true },
    },
    example: 'apps:rotate-secret --id q7WcX0…',
  },
  'apps:claim': {
    summary: 'Gives an application registered dynamically (owner null in apps:list) to a user, whose dashboard then lists it',
    flags: {
      id: { value: 'ID', description: 'Application ID as apps:list shows it (the internal id works too)', required: true },
      ...user('Username of the new owner', 'owner'),
    },
    example: 'apps:claim --id 9f2c41… --user ada',
  },
  'resources:create': {
    summary: 'Registers a resource server other than Agora (RFC 8707) and prints its introspection credential (the secret shown this once)',
    flags: {
      ...user('Username of the owner, whose dashboard lists the resource server', 'owner'),
      name: { value: 'N', description: 'Name shown to users on the consent page (1 to 100 characters)', required: true },
      identifier: {
        value: 'URI',
        description: 'The resource URI clients send as resource and tokens carry as aud: https (http for localhost), no query nor fragment',
        required: true,
      },
      'access-token-format': {
        value: 'F',
        description: 'jwt (RFC 9068, verified with the JWKS; the default) or opaque (verified by introspection)',
        check: oneOf(['jwt', 'opaque']),
      },
    },
    example: 'resources:create --user ada --name "Billing API" --identifier https://billing.example.com',
    notes: ['Its identifier must not be BASE_URL or an address under it: that is Agora’s own API.'],
  },
  'resources:list': {
    summary: 'Resource servers with their identifier, owner, token format and introspection id; never a secret',
    flags: user('Only the resource servers of this user', 'owner', false),
    example: 'resources:list --user ada',
  },
  'resources:delete': {
    summary: 'Deletes a resource server: clients can no longer ask for it and its credential introspects nothing',
    flags: { id: { value: 'ID', description: 'Id of the resource server, as resources:list prints it', required: true } },
    example: 'resources:delete --id 3f1c…',
  },
  'keys:rotate': {
    summary: 'New signing keys (RS256, ES256 and EdDSA); the old ones stay in the JWKS until their tokens expire',
    flags: {
      alg: {
        value: 'A',
        description: `Only this algorithm's key: ${SIGNING_ALGS.join(', ')} (default: every algorithm)`,
        check: oneOf(SIGNING_ALGS),
      },
    },
    example: 'keys:rotate --alg ES256',
  },
  'jobs:list': {
    summary: 'Each job queue (waiting, scheduled, active, failed, age of the oldest waiting job) and its jobs in one state, newest first',
    flags: {
      state: {
        value: 'S',
        description: 'Which jobs: failed (default: the dead letters, retries run out), waiting, scheduled, active or completed',
        check: oneOf(JOB_LIST_STATES),
      },
      queue: { value: 'Q', description: 'Only this queue (default: every queue)' },
      limit: { value: 'N', description: 'At most this many jobs (default 50)', check: wholeNumber(1, 1000, 'jobs') },
    },
    example: 'jobs:list --state failed',
  },
  'jobs:show': {
    summary: "One job: its queue, state, attempts, times, data and last error (the job's data may name people: handle it as personal data)",
    flags: {
      id: { value: 'ID', description: 'The job id (jobs:list, or the log line of its failure)', required: true, check: uuid('job id') },
    },
    example: 'jobs:show --id 0b7c3f4e-6f0a-4c55-9a55-2b0f6d0f0d01',
  },
  'jobs:retry': {
    summary: 'Gives failed jobs one more attempt, now (a job that fails it again is kept as failed)',
    flags: {
      id: { value: 'ID', description: 'A failed job to retry (may be repeated)', repeatable: true, check: uuid('job id') },
      'all-failed': { description: 'Every failed job (of --queue when given)' },
      queue: { value: 'Q', description: 'With --all-failed: only this queue' },
    },
    example: 'jobs:retry --all-failed',
    notes: ['Give --id or --all-failed. A job that is not failed (waiting, running, completed) is left as it is and reported.'],
  },
  'legacy:usage': {
    summary: 'Calls to the legacy REST API per token, most used first',
    flags: { days: { value: 'N', description: 'How many days back to count (default 30)', check: wholeNumber(1, 3660, 'days') } },
    example: 'legacy:usage --days 7',
  },
  'seed:demo': {
    summary: 'Demo organizers, events across time zones, users and registrations (once; prints the demo users)',
    flags: password(false),
    example: 'seed:demo',
    notes: ['Without a password the demo users get a random one, printed with them.'],
  },
  'migration:run': {
    summary: 'Applies pending migrations (the server also does at start-up unless MIGRATIONS_RUN=false)',
    flags: {},
    example: 'migration:run',
  },
  'migration:revert': {
    summary: 'Reverts the last applied migration',
    flags: {},
    example: 'migration:revert',
  },
  'migration:generate': {
    summary: 'Writes a migration for what the entities changed, compared with the existing migrations',
    flags: {
      name: {
        value: 'NAME',
        description: 'Name of the migration file: lowercase words joined by "-"',
        required: true,
        check: migrationName,
      },
    },
    example: 'migration:generate --name add-ticket-types',
    notes: [
      'Compares against a scratch embedded database, never the configured one. Writes into src/database/migrations/,',
      'numbered after the newest migration (so it runs last) and formatted as `npm run format` would.',
    ],
  },
} satisfies Record<string, CommandSpec>;

export type CommandName = keyof typeof commands;

export const COMMANDS: Record<CommandName, CommandSpec> = commands;

export function isCommand(name: string): name is CommandName {
  return Object.hasOwn(COMMANDS, name);
}
