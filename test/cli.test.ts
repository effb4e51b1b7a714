import { jest } from '@jest/globals';
import { resolve } from 'node:path';
import { DataSource } from 'typeorm';
import { AccountLinks } from '../src/account-links/account-links.service.js';
import { ApplicationsService } from '../src/oauth/clients/applications.service.js';
import { UsersService } from '../src/users/users.service.js';
import { graphql } from './support/http.js';
import { Browser, signIn } from './support/browser.js';
import { createUser, TEST_PASSWORD } from './support/fixtures.js';
import { ROOT, runCli, runCliWithInput, runTypeormCli } from './support/processes.js';
import { startTestApp, TestApp } from './support/test-app.js';

const VIEWER = '{ viewer { id name } }';

// The server runs (in this process) while the CLI works on the same database: on the embedded
// database the CLI has to go through the server's socket, since only one process may open it.
// Each command is a process that loads the application (seconds each, more on a busy machine), and a
// test runs up to eight: three minutes a test rather than the suite's one.
jest.setTimeout(180_000);
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe('administration CLI', () => {
  it('creates a user and a token that the running server accepts', async () => {
    const user = await runCli(
      t.databaseEnv,
      'users:create',
      '--username',
      'grace',
      '--email',
      'grace@example.com',
      '--name',
      'Grace Hopper',
      '--password',
      'cobol-compiler-1959',
    );
    expect(user.stderr).toBe('');
    expect(user.code).toBe(0);
    expect(Object.keys(user.json).sort()).toEqual(['id', 'username']);
    expect(user.json.username).toBe('grace');

    const token = await runCli(t.databaseEnv, 'tokens:create', '--user', 'grace', '--name', 'deploy script', '--scopes', 'read_api');
    expect(token.code).toBe(0);
    expect(token.json.token).toMatch(/^agora_pat_/);
    expect(token.json.scopes).toEqual(['read_api']);

    const res = await graphql(t.url, VIEWER, { privateToken: token.json.token });
    expect(res.status).toBe(200);
    expect(res.body.data?.viewer).toEqual({ id: user.json.id, name: 'Grace Hopper' });
  });

  it('refuses tokens:create for a user whose address is not verified, and makes one once it is', async () => {
    await runCli(
      t.databaseEnv,
      'users:create',
      '--username',
      'ada',
      '--email',
      'ada@example.com',
      '--name',
      'Ada',
      '--password',
      'analytical-engine-1843',
    );
    await t.get(DataSource).query(`UPDATE users SET email_verified_at = NULL WHERE username = 'ada'`);
    const refused = await runCli(t.databaseEnv, 'tokens:create', '--user', 'ada', '--name', 'script');
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(/verif/i);
    expect(
      await t.get(DataSource).query(`SELECT 1 FROM personal_access_tokens t JOIN users u ON u.id = t.user_id WHERE u.username = 'ada'`),
    ).toEqual([]);

    expect((await runCli(t.databaseEnv, 'users:verify-email', '--user', 'ada')).code).toBe(0);
    const made = await runCli(t.databaseEnv, 'tokens:create', '--user', 'ada', '--name', 'script');
    expect(made.code).toBe(0);
    expect(made.json.token).toMatch(/^agora_pat_/);
  });

  it('revokes a token: the next request fails', async () => {
    await runCli(
      t.databaseEnv,
      'users:create',
      '--username',
      'linus',
      '--email',
      'linus@example.com',
      '--name',
      'Linus',
      '--password',
      'penguin-kernel-1991',
    );
    const token = await runCli(t.databaseEnv, 'tokens:create', '--user', 'linus', '--name', 'ci');
    expect(token.json.scopes).toEqual(['api']);
    expect((await graphql(t.url, VIEWER, { privateToken: token.json.token })).status).toBe(200);

    const revoked = await runCli(t.databaseEnv, 'tokens:revoke', '--id', token.json.id);
    expect(revoked.code).toBe(0);
    expect(revoked.json.revokedAt).toEqual(expect.any(String));
    expect((await graphql(t.url, VIEWER, { privateToken: token.json.token })).status).toBe(401);
  });

  it('blocks a user: their tokens stop working at once', async () => {
    await runCli(
      t.databaseEnv,
      'users:create',
      '--username',
      'mallory',
      '--email',
      'mallory@example.com',
      '--name',
      'Mallory',
      '--password',
      'not-so-trusted-99',
    );
    const token = await runCli(t.databaseEnv, 'tokens:create', '--user', 'mallory', '--name', 'x');
    expect((await graphql(t.url, VIEWER, { privateToken: token.json.token })).status).toBe(200);
    const blocked = await runCli(t.databaseEnv, 'users:block', '--user', 'mallory');
    expect(blocked.json).toMatchObject({ username: 'mallory', state: 'blocked' });
    expect((await graphql(t.url, VIEWER, { privateToken: token.json.token })).status).toBe(401);
  });

  it('shows the secret only once: the database holds its hash alone', async () => {
    await runCli(
      t.databaseEnv,
      'users:create',
      '--username',
      'alan',
      '--email',
      'alan@example.com',
      '--name',
      'Alan',
      '--password',
      'enigma-machine-1941',
    );
    const token = await runCli(t.databaseEnv, 'tokens:create', '--user', 'alan', '--name', 'x');
    const listed = await runCli(t.databaseEnv, 'tokens:list', '--user', 'alan');
    expect(listed.stdout).not.toContain(token.json.token);
    expect(listed.json.tokens).toHaveLength(1);
    const dump = JSON.stringify(await t.get(DataSource).query('SELECT * FROM personal_access_tokens'));
    expect(dump).not.toContain(token.json.token);
  });

  it.each([
    [['users:create', '--username', 'x'], /--email is required/, 2],
    [['users:set-password', '--user', 'nobody', '--password', 'long-enough-pass'], /^agora: --user: No user with username "nobody"/, 1],
    [
      ['users:create', '--username', 'bad name', '--email', 'b@example.com', '--name', 'B', '--password', 'long-enough-pass'],
      /Username must be/,
      1,
    ],
    [['tokens:create', '--user', 'nobody', '--name', 'x'], /No user with username "nobody"/, 1],
    [['tokens:create', '--user', 'grace', '--name', 'x', '--scopes', 'openid'], /Scopes must be one or more of: api, read_api/, 1],
    [['tokens:revoke', '--id', 'not-a-uuid'], /No personal access token/, 1],
    [['frobnicate'], /Unknown command "frobnicate"/, 2],
    [['users:create', '--bogus', 'x'], /Unknown flag --bogus for users:create/, 2],
  ])('reports %j on stderr with a non-zero exit and nothing on stdout', async (args, message, code) => {
    const result = await runCli(t.databaseEnv, ...(args as string[]));
    expect(result.code).toBe(code);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(message);
  });

  it('reports every missing flag and every invalid field of users:create at once', async () => {
    const missing = await runCli(t.databaseEnv, 'users:create', '--username', 'x');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--email is required\n--name is required\n--password is required/);
    const invalid = await runCli(
      t.databaseEnv,
      ...['users:create', '--username', 'bad name', '--email', 'nope', '--name', 'B', '--password', 'short'],
    );
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/agora: --username: Username must be/);
    expect(invalid.stderr).toMatch(/agora: --email: Email must be a valid address/);
    expect(invalid.stderr).toMatch(/agora: --password: Password must be at least 10 characters/);
  });

  it("sets a user's password from standard input, signs them out everywhere, ends their reset links and tells them", async () => {
    const user = await createUser(t);
    const browser = new Browser(t.url);
    await browser.follow(await signIn(browser, user.username, TEST_PASSWORD));
    expect((await browser.get('/account')).status).toBe(200);
    const reset = await t.get(DataSource).transaction((tx) => t.get(AccountLinks).issue(tx, user.id, 'reset-password', user.email));

    const weak = await runCliWithInput(t.databaseEnv, 'short\n', 'users:set-password', '--user', user.username, '--password-stdin');
    expect(weak.code).toBe(1);
    expect(weak.stderr).toMatch(/Password must be at least 10 characters/);

    const set = await runCliWithInput(
      t.databaseEnv,
      'a-brand-new-passphrase\n',
      'users:set-password',
      '--user',
      user.username,
      '--password-stdin',
    );
    expect(set.stderr).toBe('');
    expect(set.json).toMatchObject({ username: user.username, sessionsEnded: 1 });
    expect((await browser.get('/account')).status).toBe(303);
    expect((await signIn(new Browser(t.url), user.username, TEST_PASSWORD)).status).toBe(401);
    expect((await signIn(new Browser(t.url), user.username, 'a-brand-new-passphrase')).status).toBe(303);
    const [link] = (await t.get(DataSource).query('SELECT used_at FROM account_links WHERE id = $1', [reset.id])) as {
      used_at: Date | null;
    }[];
    expect(link!.used_at).not.toBeNull();
    const notices = (await t
      .get(DataSource)
      .query(
        `SELECT data FROM pgboss.job WHERE name = 'security-notices' AND data->>'userId' = $1 AND data->'notice'->>'kind' = 'password-changed'`,
        [user.id],
      )) as {
      data: { notice: unknown };
    }[];
    expect(notices.map((row) => row.data.notice)).toEqual([{ kind: 'password-changed' }]);
  });

  it("sets a user's e-mail address, refusing an invalid or taken one", async () => {
    const user = await createUser(t);
    const other = await createUser(t);
    const invalid = await runCli(t.databaseEnv, 'users:set-email', '--user', user.username, '--email', 'nope');
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/--email: Email must be a valid address/);
    const taken = await runCli(t.databaseEnv, 'users:set-email', '--user', user.username, '--email', other.email);
    expect(taken.code).toBe(1);
    const set = await runCli(t.databaseEnv, 'users:set-email', '--user', user.username, '--email', 'moved@example.com');
    expect(set.json).toMatchObject({ username: user.username, email: 'moved@example.com', emailVerified: true });
    expect((await signIn(new Browser(t.url), 'moved@example.com', TEST_PASSWORD)).status).toBe(303);
    // Trusted, as an administrator's change on GitLab: verified at once; the old address is told.
    expect((await t.get(UsersService).findById(user.id))!.emailVerified).toBe(true);
    const notices = (await t
      .get(DataSource)
      .query(`SELECT data FROM pgboss.job WHERE name = 'security-notices' AND data->>'userId' = $1`, [user.id])) as { data: unknown }[];
    expect(notices.map((row) => row.data)).toEqual([
      { userId: user.id, notice: { kind: 'email-changed', newEmail: 'moved@example.com' }, to: user.email, at: expect.any(String) },
    ]);
  });

  it("marks a user's e-mail address verified, once", async () => {
    const user = await createUser(t, { verified: false });
    const first = await runCli(t.databaseEnv, 'users:verify-email', '--user', user.username);
    expect(first.code).toBe(0);
    expect(first.json).toMatchObject({ username: user.username, emailVerified: true, alreadyVerified: false });
    expect((await t.get(UsersService).findById(user.id))!.emailVerified).toBe(true);
    const again = await runCli(t.databaseEnv, 'users:verify-email', '--user', user.username);
    expect(again.json).toMatchObject({ alreadyVerified: true });
    const unknown = await runCli(t.databaseEnv, 'users:verify-email', '--user', 'no-such-user');
    expect(unknown.code).toBe(1);
  });

  it('refuses a duplicate username or email, case-insensitively', async () => {
    const result = await runCli(
      t.databaseEnv,
      'users:create',
      '--username',
      'GRACE',
      '--email',
      'other@example.com',
      '--name',
      'G',
      '--password',
      'another-long-pass',
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/Username is already taken/);
    const email = await runCli(
      t.databaseEnv,
      'users:create',
      '--username',
      'grace2',
      '--email',
      'Grace@Example.com',
      '--name',
      'G',
      '--password',
      'another-long-pass',
    );
    expect(email.stderr).toMatch(/This email address cannot be used for a new account/);
    expect(email.stderr).not.toMatch(/argon2|INSERT|PARAMETERS/);
  });

  it.each([
    [['users:create', '--help']],
    [['users:create', '-h']],
    [['help', 'users:create']],
    [['users:create', '--username', 'x', '--bogus', '--help']],
  ])('prints the usage, flags and an example of one command for %j', async (args) => {
    const result = await runCli(t.databaseEnv, ...args);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const lines = result.stdout.split('\n');
    expect(lines[0]).toBe('Usage: npm run cli -- users:create --username U --email E --name N (--password P | --password-stdin)');
    for (const flag of ['--username U', '--email E', '--name N', '--password P', '--password-stdin', '-h, --help'])
      expect(lines.filter((line) => line.startsWith(`  ${flag}  `) && line.trim() !== flag)).toHaveLength(1);
    expect(result.stdout).toMatch(/\nExample:\n {2}npm run cli -- users:create --username \S+ .*\n$/);
    expect(result.stdout).not.toMatch(/tokens:create/);
  });

  it('lists every command, and how to get its help, without a command or with help', async () => {
    for (const args of [[], ['help'], ['--help']]) {
      const result = await runCli(t.databaseEnv, ...args);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/npm run cli -- <command> --help/);
      for (const command of ['users:list', 'users:create', 'tokens:create', 'apps:list', 'apps:rotate-secret', 'migration:run'])
        expect(result.stdout).toMatch(new RegExp(`^  ${command} +\\S`, 'm'));
    }
  });

  it.each([
    [['frobnicate'], 'Unknown command "frobnicate". Run "npm run cli -- help" for the commands.'],
    [['help', 'frobnicate'], 'Unknown command "frobnicate". Run "npm run cli -- help" for the commands.'],
    [
      ['users:craete', '--username', 'x'],
      'Unknown command "users:craete" (did you mean users:create?). Run "npm run cli -- help" for the commands.',
    ],
    [
      ['users:create', '--username', 'x', '--email', 'x@example.com', '--name', 'X', '--password-stdin', '--bogus', 'x'],
      'Unknown flag --bogus for users:create\nRun "npm run cli -- users:create --help" for its flags.',
    ],
    [
      ['users:create', '--user', 'x', '--email', 'x@example.com', '--name', 'X', '--password-stdin'],
      'Unknown flag --user for users:create (did you mean --username?)\n--username is required\nRun "npm run cli -- users:create --help" for its flags.',
    ],
    // A flag of another command is refused rather than ignored.
    [
      ['users:block', '--user', 'x', '--email', 'x@example.com'],
      'Unknown flag --email for users:block\nRun "npm run cli -- users:block --help" for its flags.',
    ],
    [
      ['users:block', 'x'],
      'Unexpected argument "x" after users:block: flags start with "--"\n--user is required\nRun "npm run cli -- users:block --help" for its flags.',
    ],
  ])('names the unknown command or flag of %j, exit 2', async (args, message) => {
    const result = await runCli(t.databaseEnv, ...args);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(`agora: ${message}\n`);
  });

  it('reports every problem of a call at once, one line each, exit 2', async () => {
    const result = await runCli(
      t.databaseEnv,
      ...['tokens:create', '--bogus', '--frob', 'x', '--name', '--expires-at', 'next tuesday', '--scopes', 'api frob'],
    );
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.split('\n')).toEqual([
      'agora: Unknown flag --bogus for tokens:create',
      'Unknown flag --frob for tokens:create',
      '--name needs a value (--name N; one starting with "--" as --name=…)',
      '--user is required',
      '--scopes: unknown scope "frob"; the scopes are api, read_api, openid, profile, email, offline_access',
      '--expires-at: "next tuesday" is not a date: give a day such as 2027-01-31, or a time such as 2027-01-31T18:00:00Z',
      'Run "npm run cli -- tokens:create --help" for its flags.',
      '',
    ]);
  });

  it('takes the former --username and --owner for an existing user, with one warning line on stderr', async () => {
    const owner = await createUser(t);
    const blocked = await runCli(t.databaseEnv, 'users:block', '--username', owner.username);
    expect(blocked.code).toBe(0);
    expect(blocked.json).toMatchObject({ username: owner.username, state: 'blocked' });
    expect(blocked.stderr).toBe('agora: warning: --username is deprecated for users:block: use --user (--username still works for now)\n');
    await runCli(t.databaseEnv, 'users:unblock', '--user', owner.username);

    const created = await runCli(
      t.databaseEnv,
      ...['apps:create', '--owner', owner.username, '--name', 'Old script', '--redirect-uri', 'https://old.example.com/cb'],
    );
    expect(created.code).toBe(0);
    expect(created.json.clientId).toMatch(/^[0-9a-f]{40}$/);
    expect(created.stderr).toBe('agora: warning: --owner is deprecated for apps:create: use --user (--owner still works for now)\n');
    const listed = await runCli(t.databaseEnv, 'apps:list', '--owner', owner.username);
    expect(listed.json.applications.map((a: { name: string }) => a.name)).toEqual(['Old script']);
    expect(listed.stderr).toBe('agora: warning: --owner is deprecated for apps:list: use --user (--owner still works for now)\n');

    const unknown = await runCli(t.databaseEnv, 'apps:list', '--user', 'nobody-at-all');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe('agora: --user: No user with username "nobody-at-all"\n');
  });

  it('reports a taken username together with the other problems of users:create', async () => {
    const taken = await createUser(t);
    const result = await runCli(
      t.databaseEnv,
      ...['users:create', '--username', taken.username.toUpperCase(), '--email', 'nope', '--name', 'N', '--password', 'long-enough-pass'],
    );
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      'agora: --username: Username is already taken\nagora: --email: Email must be a valid address such as name@example.com\n',
    );
  });

  it('prints scopes as an array and redirect URIs under one name in every command', async () => {
    const owner = await createUser(t);
    const app = await runCli(
      t.databaseEnv,
      ...['apps:create', '--user', owner.username, '--name', 'Shapes', '--redirect-uri', 'https://shapes.example.com/cb'],
      ...['--scopes', 'openid api'],
    );
    const listed = await runCli(t.databaseEnv, 'apps:list', '--user', owner.username);
    const token = await runCli(t.databaseEnv, 'tokens:create', '--user', owner.username, '--name', 'shapes', '--scopes', 'read_api');
    const tokens = await runCli(t.databaseEnv, 'tokens:list', '--user', owner.username);
    for (const entry of [app.json, listed.json.applications[0], token.json, tokens.json.tokens[0]]) {
      expect(Array.isArray(entry.scopes)).toBe(true);
      expect(Object.keys(entry)).not.toContain('redirectUri');
    }
    expect(app.json).toMatchObject({
      redirectUris: ['https://shapes.example.com/cb'],
      postLogoutRedirectUris: [],
      scopes: ['openid', 'api'],
    });
    expect(listed.json.applications[0]).toMatchObject({ redirectUris: app.json.redirectUris, scopes: app.json.scopes });
  });

  it.each([
    [
      ['tokens:create', '--user', 'grace', '--name', 'x', '--expires-at', 'next tuesday'],
      /^agora: --expires-at: "next tuesday" is not a date: give a day such as 2027-01-31/,
    ],
    [['tokens:create', '--user', 'grace', '--name', 'x', '--expires-at', '2027-02-30'], /^agora: --expires-at: "2027-02-30" is not a date/],
    [
      ['tokens:create', '--user', 'grace', '--name', 'x', '--scopes', 'api frob'],
      /^agora: --scopes: unknown scope "frob"; the scopes are api, read_api, openid/,
    ],
    [
      ['apps:create', '--user', 'grace', '--name', 'x', '--redirect-uri', 'http://localhost/cb', '--scopes', 'openid admin'],
      /^agora: --scopes: unknown scope "admin"/,
    ],
    [
      ['apps:create', '--user', 'grace', '--name', 'x', '--redirect-uri', 'http://localhost/cb', '--type', 'spa'],
      /^agora: --type: must be "confidential" or "public", not "spa"/,
    ],
    [['legacy:usage', '--days', 'abc'], /^agora: --days: must be a whole number of days from 1 to 3660, not "abc"/],
    [['legacy:usage', '--days', '1.5'], /^agora: --days: must be a whole number of days/],
    [['tokens:create', '--user', 'grace', '--name'], /^agora: --name needs a value/],
    [['users:block', '--user', 'a', '--user', 'b'], /^agora: --user may be given only once/],
    [['users:block', '--user', 'a', '--username', 'b'], /^agora: --user may be given only once \(--username is the same flag\)/],
    [['migration:generate', '--name', 'Add Things'], /^agora: --name: must be lowercase words joined by "-"/],
    [
      ['users:create', '--username', 'x', '--email', 'x@example.com', '--name', 'X', '--password', 'p', '--password-stdin'],
      /^agora: Give --password or --password-stdin, not both/,
    ],
  ])('refuses the bad value in %j before touching the database, exit 2', async (args, message) => {
    const result = await runCli(t.databaseEnv, ...args);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(message);
    expect(result.stderr).toMatch(/\nRun "npm run cli -- [a-z:-]+ --help" for its flags\.\n$/);
  });

  it('lists users without their password hashes', async () => {
    const user = await createUser(t);
    const listed = await runCli(t.databaseEnv, 'users:list');
    expect(listed.stderr).toBe('');
    expect(listed.code).toBe(0);
    const entry = listed.json.users.find((u: { username: string }) => u.username === user.username);
    expect(entry).toEqual({
      id: user.id,
      username: user.username,
      name: user.name,
      email: user.email,
      emailVerified: true,
      state: 'active',
      mailReminders: true,
      createdAt: expect.any(String),
    });
    const hashes = (await t.get(DataSource).query('SELECT password_hash FROM users')) as { password_hash: string }[];
    for (const { password_hash } of hashes) expect(listed.stdout).not.toContain(password_hash);
    expect(listed.stdout).not.toMatch(/argon2|password/i);
  });

  it('lists applications by the Application ID the dashboard shows, and rotates a secret by it', async () => {
    const owner = await createUser(t);
    const other = await createUser(t);
    const create = (user: string, name: string) =>
      runCli(
        t.databaseEnv,
        'apps:create',
        '--user',
        user,
        '--name',
        name,
        '--redirect-uri',
        'http://localhost:4000/cb',
        '--scopes',
        'openid api',
      );
    const created = await create(owner.username, 'Listed client');
    await create(other.username, 'Other client');

    const browser = new Browser(t.url);
    await signIn(browser, owner.username, TEST_PASSWORD);
    const dashboard = await (await browser.get('/applications')).text();
    const shown = /data-label="Application ID"><code>([^<]+)<\/code>/.exec(dashboard)![1]!;
    // Hex: an id starting with "-" (one base64url id in 64 did) would be read as a flag after --id.
    expect(shown).toMatch(/^[0-9a-f]{40}$/);
    expect(shown).toBe(created.json.clientId);

    const all = await runCli(t.databaseEnv, 'apps:list');
    expect(all.code).toBe(0);
    const listed = all.json.applications.find((a: { clientId: string }) => a.clientId === shown);
    expect(listed).toEqual({
      clientId: shown,
      name: 'Listed client',
      clientType: 'confidential',
      owner: owner.username,
      redirectUris: ['http://localhost:4000/cb'],
      postLogoutRedirectUris: [],
      scopes: ['openid', 'api'],
      createdAt: expect.any(String),
      secretRotatedAt: null,
      id: created.json.id,
    });
    const mine = await runCli(t.databaseEnv, 'apps:list', '--user', owner.username);
    expect(mine.json.applications.map((a: { name: string }) => a.name)).toEqual(['Listed client']);
    const secretHashes = (await t.get(DataSource).query('SELECT client_secret_hash FROM oauth_applications')) as {
      client_secret_hash: string;
    }[];
    for (const output of [all.stdout, mine.stdout]) {
      expect(output).not.toContain(created.json.clientSecret);
      expect(output).not.toMatch(/agora_ocs_|secret"/i);
      for (const { client_secret_hash } of secretHashes) expect(output).not.toContain(client_secret_hash);
    }

    const applications = t.get(ApplicationsService);
    const rotated = await runCli(t.databaseEnv, 'apps:rotate-secret', '--id', shown);
    expect(rotated.stderr).toBe('');
    expect(rotated.json).toEqual({ clientId: shown, clientSecret: expect.stringMatching(/^agora_ocs_/) });
    expect(await applications.authenticate(shown, created.json.clientSecret)).toBeNull();
    expect(await applications.authenticate(shown, rotated.json.clientSecret)).not.toBeNull();
    // The internal id (the page address) still works.
    const again = await runCli(t.databaseEnv, 'apps:rotate-secret', '--id', created.json.id);
    expect(again.json.clientId).toBe(shown);
    expect(await applications.authenticate(shown, again.json.clientSecret)).not.toBeNull();

    const unknown = await runCli(t.databaseEnv, 'apps:rotate-secret', '--id', 'no-such-application');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe('agora: --id: No application with id "no-such-application"\n');
  });

  it('registers a public application: no secret, its type in the output and the list, no secret to rotate', async () => {
    const owner = await createUser(t);
    const created = await runCli(
      t.databaseEnv,
      ...['apps:create', '--user', owner.username, '--name', 'Desktop app', '--type', 'public'],
      ...['--redirect-uri', 'http://127.0.0.1/callback', '--redirect-uri', 'com.example.desktop:/callback'],
      ...['--post-logout-redirect-uri', 'http://127.0.0.1/signed-out', '--post-logout-redirect-uri', 'https://app.example.com/bye'],
    );
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    expect(created.json).toEqual({
      clientId: expect.stringMatching(/^[0-9a-f]{40}$/),
      clientType: 'public',
      redirectUris: ['http://127.0.0.1/callback', 'com.example.desktop:/callback'],
      postLogoutRedirectUris: ['http://127.0.0.1/signed-out', 'https://app.example.com/bye'],
      scopes: ['openid', 'profile', 'email', 'api', 'read_api'],
      tokenEndpointAuthMethod: 'none',
      idTokenSignedResponseAlg: 'RS256',
      accessTokenFormat: 'opaque',
      subjectType: 'public',
      backchannelLogoutUri: null,
      backchannelLogoutSessionRequired: false,
      clientUri: null,
      logoUri: null,
      description: null,
      id: expect.any(String),
    });
    expect(created.stdout).not.toMatch(/secret"|agora_ocs_/);
    const [row] = (await t.get(DataSource).query('SELECT client_secret_hash FROM oauth_applications WHERE id = $1', [created.json.id])) as {
      client_secret_hash: string | null;
    }[];
    expect(row!.client_secret_hash).toBeNull();

    const confidential = await runCli(
      t.databaseEnv,
      ...['apps:create', '--user', owner.username, '--name', 'Web app', '--redirect-uri', 'https://web.example.com/cb'],
    );
    expect(confidential.json).toMatchObject({ clientSecret: expect.stringMatching(/^agora_ocs_/), clientType: 'confidential' });
    expect(confidential.json.postLogoutRedirectUris).toEqual([]);

    const listed = await runCli(t.databaseEnv, 'apps:list', '--user', owner.username);
    expect(listed.json.applications.map((a: { name: string; clientType: string }) => [a.name, a.clientType])).toEqual(
      expect.arrayContaining([
        ['Desktop app', 'public'],
        ['Web app', 'confidential'],
      ]),
    );

    const rotate = await runCli(t.databaseEnv, 'apps:rotate-secret', '--id', created.json.clientId);
    expect(rotate.code).toBe(1);
    expect(rotate.stdout).toBe('');
    expect(rotate.stderr).toBe('agora: --id: A public client has no secret to rotate: it proves itself with PKCE alone\n');
  });

  it('apps:create takes the token, subject, logout and profile settings, checked as the dashboard checks them, every problem named by its flag', async () => {
    const owner = await createUser(t);
    const created = await runCli(
      t.databaseEnv,
      ...['apps:create', '--user', owner.username, '--name', 'Full app', '--redirect-uri', 'https://full.example.com/cb'],
      ...['--client-uri', 'https://full.example.com/', '--logo-uri', 'https://cdn.example.com/full.png', '--description', 'Does it all'],
      ...['--id-token-signed-response-alg', 'ES256', '--access-token-format', 'jwt', '--subject-type', 'pairwise'],
      ...['--backchannel-logout-uri', 'https://full.example.com/logout', '--backchannel-logout-session-required'],
      ...['--token-endpoint-auth-method', 'client_secret_post'],
    );
    expect(created.stderr).toBe('');
    const settings = {
      tokenEndpointAuthMethod: 'client_secret_post',
      idTokenSignedResponseAlg: 'ES256',
      accessTokenFormat: 'jwt',
      subjectType: 'pairwise',
      backchannelLogoutUri: 'https://full.example.com/logout',
      backchannelLogoutSessionRequired: true,
      clientUri: 'https://full.example.com/',
      logoUri: 'https://cdn.example.com/full.png',
      description: 'Does it all',
    };
    expect(created.json).toMatchObject({ clientSecret: expect.stringMatching(/^agora_ocs_/), ...settings });
    expect(await t.get(ApplicationsService).get(created.json.id)).toMatchObject(settings);

    const refused = await runCli(
      t.databaseEnv,
      ...['apps:create', '--user', owner.username, '--name', 'Bad app', '--redirect-uri', 'https://a.example.com/cb'],
      ...['--redirect-uri', 'https://b.example.com/cb', '--subject-type', 'pairwise', '--access-token-format', 'paseto'],
      ...['--id-token-signed-response-alg', 'HS256', '--logo-uri', 'http://cdn.example.com/x.png'],
      ...['--backchannel-logout-uri', 'https://a.example.com/logout#x'],
    );
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    const lines = refused.stderr.trimEnd().split('\n');
    for (const expected of [
      /^agora: --subject-type: .*one host/,
      /^agora: --access-token-format: Choose one of opaque, jwt/,
      /^agora: --id-token-signed-response-alg: Choose one of RS256, ES256, EdDSA/,
      /^agora: --logo-uri: Logo URL must use https/,
      /^agora: --backchannel-logout-uri: .*fragment/,
    ])
      expect(lines).toContainEqual(expect.stringMatching(expected));
    expect(await t.get(ApplicationsService).listForOwner(owner.id)).toHaveLength(1);
  });

  it('refuses a private-use scheme for a confidential application, with the field it is about', async () => {
    const owner = await createUser(t);
    const result = await runCli(
      t.databaseEnv,
      ...['apps:create', '--user', owner.username, '--name', 'x', '--redirect-uri', 'com.example.app:/cb'],
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^agora: --redirect-uri: Redirect URIs must use https/);
  });

  it('lists an application nobody owns yet with owner null', async () => {
    const { application } = await t
      .get(ApplicationsService)
      .create(null, { name: 'Registered dynamically', redirectUris: ['https://mcp.example.com/cb'], scopes: ['openid'] }, 'public');
    const listed = await runCli(t.databaseEnv, 'apps:list');
    const entry = listed.json.applications.find((a: { id: string }) => a.id === application.id);
    expect(entry).toMatchObject({ name: 'Registered dynamically', owner: null, clientType: 'public' });
  });

  it('creates a user whose password is the first line of standard input', async () => {
    const created = await runCliWithInput(
      t.databaseEnv,
      'piped-password-1234\nnot part of it\n',
      ...['users:create', '--username', 'piper', '--email', 'piper@example.com', '--name', 'Piper', '--password-stdin'],
    );
    expect(created.stderr).toBe('');
    expect(created.json.username).toBe('piper');
    expect((await signIn(new Browser(t.url), 'piper', 'piped-password-1234')).status).toBe(303);

    const empty = await runCliWithInput(t.databaseEnv, '', 'users:set-password', '--user', 'piper', '--password-stdin');
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/^agora: --password-stdin: standard input has no password on its first line\n/);
  });

  it('applies migrations idempotently', async () => {
    const result = await runCli(t.databaseEnv, 'migration:run');
    expect(result.code).toBe(0);
    expect(result.json).toEqual({ applied: [] });
  });

  it("gives the TypeORM CLI the service's data source in ormconfig.ts, migrated", async () => {
    const shown = await runTypeormCli(t.databaseEnv, 'migration:show', '-d', resolve(ROOT, 'dist/ormconfig.js'));
    expect(shown.stderr).toBe('');
    expect(shown.code).toBe(0);
    const lines = shown.stdout.trim().split('\n');
    expect(lines.length).toBeGreaterThan(5);
    for (const line of lines) expect(line).toMatch(/^\[X\] \d+ \w+\d{13}$/);
  });
});
