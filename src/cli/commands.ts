import { INestApplicationContext } from '@nestjs/common';
import { PersonalTokensService } from '../personal-tokens/personal-tokens.service.js';
import { parseScopeList } from '../auth/scopes.js';
import { UsersService } from '../users/users.service.js';
import { SessionsService } from '../sessions/sessions.service.js';
import { ApplicationsService } from '../oauth/applications.service.js';
import { SigningKeysService } from '../oauth/signing-keys.service.js';
import { DemoSeeder } from '../events/demo-seed.js';
import { LegacyApiUsageService } from '../legacy-api/legacy-api-usage.service.js';
import { UsageError } from './cli-error.js';

export type Flags = Record<string, string | string[] | undefined>;

const DEFAULT_APP_SCOPES = 'openid profile email api read_api';

function list(value: string | string[] | undefined): string[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

export interface Command {
  usage: string;
  run(app: INestApplicationContext, flags: Flags): Promise<unknown>;
}

export function optional(flags: Flags, name: string): string | undefined {
  const value = flags[name];
  if (Array.isArray(value)) throw new UsageError(`--${name} may be given only once`);
  return value;
}

/** Several required flags, every missing one reported at once. */
export function requiredAll<K extends string>(flags: Flags, names: readonly K[]): Record<K, string> {
  const missing = names.filter((name) => {
    const value = optional(flags, name);
    return value === undefined || value === '';
  });
  if (missing.length > 0) throw new UsageError(missing.map((name) => `--${name} is required`).join('\n'));
  return Object.fromEntries(names.map((name) => [name, optional(flags, name)!])) as Record<K, string>;
}

export function required(flags: Flags, name: string): string {
  const value = optional(flags, name);
  if (value === undefined || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

/** Commands that work on the service's data through its own services (same rules as the API). */
export const DATA_COMMANDS: Record<string, Command> = {
  'legacy:usage': {
    usage: 'legacy:usage [--days 30]   (calls to the legacy REST API per token, most used first)',
    async run(app, flags) {
      const days = Number(optional(flags, 'days') ?? 30);
      if (!Number.isInteger(days) || days < 1 || days > 3660) throw new UsageError('--days must be a whole number of days from 1 to 3660');
      return { days, usage: await app.get(LegacyApiUsageService).report(new Date(Date.now() - days * 86_400_000)) };
    },
  },
  'seed:demo': {
    usage: 'seed:demo [--password P]   (demo organizers, events across time zones, users and registrations)',
    async run(app, flags) {
      return app.get(DemoSeeder).run(optional(flags, 'password'));
    },
  },
  'users:create': {
    usage: 'users:create --username U --email E --name N (--password P | --password-stdin)',
    async run(app, flags) {
      const user = await app.get(UsersService).create(requiredAll(flags, ['username', 'email', 'name', 'password']));
      return { id: user.id, username: user.username };
    },
  },
  'users:set-password': {
    usage: 'users:set-password --username U (--password P | --password-stdin)   (signs the user out everywhere)',
    async run(app, flags) {
      const { username, password } = requiredAll(flags, ['username', 'password']);
      const user = await app.get(UsersService).setPassword(username, password);
      const sessionsEnded = await app.get(SessionsService).endAllFor(user.id);
      return { id: user.id, username: user.username, sessionsEnded };
    },
  },
  'users:set-email': {
    usage: 'users:set-email --username U --email E',
    async run(app, flags) {
      const { username, email } = requiredAll(flags, ['username', 'email']);
      const user = await app.get(UsersService).setEmail(username, email);
      return { id: user.id, username: user.username, email: user.email };
    },
  },
  'users:block': {
    usage: 'users:block --username U',
    async run(app, flags) {
      const user = await app.get(UsersService).setState(required(flags, 'username'), 'blocked');
      return { id: user.id, username: user.username, state: user.state };
    },
  },
  'users:unblock': {
    usage: 'users:unblock --username U',
    async run(app, flags) {
      const user = await app.get(UsersService).setState(required(flags, 'username'), 'active');
      return { id: user.id, username: user.username, state: user.state };
    },
  },
  'tokens:create': {
    usage: 'tokens:create --user U --name N [--scopes "api"] [--expires-at 2027-01-31]',
    async run(app, flags) {
      const user = await app.get(UsersService).getByUsername(required(flags, 'user'));
      const expires = optional(flags, 'expires-at');
      const { token, personalToken } = await app.get(PersonalTokensService).create(user.id, {
        name: required(flags, 'name'),
        scopes: parseScopeList(optional(flags, 'scopes') ?? 'api'),
        expiresAt: expires ? new Date(expires) : null,
      });
      return { id: personalToken.id, token, scopes: personalToken.scopes, expiresAt: personalToken.expiresAt };
    },
  },
  'tokens:list': {
    usage: 'tokens:list --user U',
    async run(app, flags) {
      const user = await app.get(UsersService).getByUsername(required(flags, 'user'));
      return { tokens: await app.get(PersonalTokensService).listForUser(user.id) };
    },
  },
  'apps:create': {
    usage: 'apps:create --owner U --name N --redirect-uri URI [--redirect-uri URI2 …] [--scopes "openid api …"]',
    async run(app, flags) {
      const owner = await app.get(UsersService).getByUsername(required(flags, 'owner'));
      const { application, clientSecret } = await app.get(ApplicationsService).create(owner.id, {
        name: required(flags, 'name'),
        redirectUris: list(flags['redirect-uri']),
        scopes: parseScopeList(optional(flags, 'scopes') ?? DEFAULT_APP_SCOPES),
      });
      return {
        clientId: application.clientId,
        clientSecret,
        redirectUri: application.redirectUris[0],
        redirectUris: application.redirectUris,
        scopes: application.scopes.join(' '),
        id: application.id,
      };
    },
  },
  'apps:rotate-secret': {
    usage: 'apps:rotate-secret --id ID',
    async run(app, flags) {
      const { application, clientSecret } = await app.get(ApplicationsService).rotateSecret(required(flags, 'id'));
      return { clientId: application.clientId, clientSecret };
    },
  },
  'keys:rotate': {
    usage: 'keys:rotate   (new id_token signing key; the old one stays in JWKS until its tokens expire)',
    async run(app) {
      return app.get(SigningKeysService).rotate();
    },
  },
  'tokens:revoke': {
    usage: 'tokens:revoke --id ID',
    async run(app, flags) {
      const token = await app.get(PersonalTokensService).revoke(required(flags, 'id'));
      return { id: token.id, revokedAt: token.revokedAt };
    },
  },
};
