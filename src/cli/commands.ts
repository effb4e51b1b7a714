import { INestApplicationContext } from '@nestjs/common';
import { PersonalTokensService } from '../personal-tokens/personal-tokens.service.js';
import { parseScopeList } from '../auth/scopes.js';
import { UsersService } from '../users/users.service.js';
import { UsageError } from './cli-error.js';

export type Flags = Record<string, string | undefined>;

export interface Command {
  usage: string;
  run(app: INestApplicationContext, flags: Flags): Promise<unknown>;
}

export function required(flags: Flags, name: string): string {
  const value = flags[name];
  if (value === undefined || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

/** Commands that work on the service's data through its own services (same rules as the API). */
export const DATA_COMMANDS: Record<string, Command> = {
  'users:create': {
    usage: 'users:create --username U --email E --name N --password P',
    async run(app, flags) {
      const user = await app.get(UsersService).create({
        username: required(flags, 'username'),
        email: required(flags, 'email'),
        name: required(flags, 'name'),
        password: required(flags, 'password'),
      });
      return { id: user.id, username: user.username };
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
      const expires = flags['expires-at'];
      const { token, personalToken } = await app.get(PersonalTokensService).create(user.id, {
        name: required(flags, 'name'),
        scopes: parseScopeList(flags.scopes ?? 'api'),
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
  'tokens:revoke': {
    usage: 'tokens:revoke --id ID',
    async run(app, flags) {
      const token = await app.get(PersonalTokensService).revoke(required(flags, 'id'));
      return { id: token.id, revokedAt: token.revokedAt };
    },
  },
};
