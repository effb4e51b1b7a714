import { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Clock } from '../clock/clock.js';
import { PersonalTokensService } from '../personal-tokens/personal-tokens.service.js';
import { parseScopeList } from '../auth/scopes.js';
import { EmailVerification } from '../account-links/email-verification.service.js';
import { PasswordChange } from '../account-links/password-change.service.js';
import { UsersService } from '../users/users.service.js';
import { SessionsService } from '../sessions/sessions.service.js';
import { SecondFactorReset } from '../users/second-factor-reset.js';
import { UserError } from '../users/users.errors.js';
import { DomainError, failuresOf, InvalidInput } from '../errors/domain-error.js';
import { ApplicationsService } from '../oauth/clients/applications.service.js';
import { SigningKeysService } from '../oauth/keys/signing-keys.service.js';
import { ResourceServersService } from '../oauth/resources/resource-servers.service.js';
import { ResourceServerDeletion } from '../oauth/resources/resource-server-deletion.js';
import type { ResourceServer } from '../oauth/resources/resource-server.model.js';
import { SIGNING_ALGS, type SigningAlg } from '../oauth/keys/signing-algorithms.js';
import { DemoSeeder } from '../events/demo-seed.js';
import { LegacyApiUsageService } from '../legacy-api/legacy-api-usage.service.js';
import { Application, ClientType } from '../oauth/clients/application.model.js';
import { inOneTransaction } from '../database/one-transaction.js';
import { JobQueue } from '../jobs/job-queue.js';
import type { JobListState } from '../jobs/job-records.js';
import type { QueueState } from '../jobs/queue-states.js';
import { CommandError, UsageError } from './cli-error.js';
import { CommandName } from './command-specs.js';
import { interruptible } from './interruptible.js';
import { Flags } from './parse-command-line.js';

const DEFAULT_APP_SCOPES = 'openid profile email api read_api';

/** A command that works on the service's data through its own services (same rules as the API). */
export type DataCommand = (app: INestApplicationContext, flags: Flags) => Promise<unknown>;

export type DataCommandName = Exclude<CommandName, `migration:${string}`>;

/** A flag the parser has checked to be there once (it is required, or has a default). */
function value(flags: Flags, name: string): string {
  return flags[name] as string;
}

function optional(flags: Flags, name: string): string | undefined {
  return flags[name] as string | undefined;
}

function list(flags: Flags, name: string): string[] {
  return (flags[name] as string[] | undefined) ?? [];
}

/** A resource server as an operator sees it: its introspection id, never its secret. */
function listedResourceServer(server: ResourceServer, owner: string | null) {
  return {
    id: server.id,
    name: server.name,
    identifier: server.identifier,
    accessTokenFormat: server.accessTokenFormat,
    introspectionId: server.introspectionId,
    owner,
    createdAt: server.createdAt,
  };
}

/** An application as an operator sees it: the Application ID the dashboard shows, never the secret. */
function listedApplication(application: Application, owner: string | null | undefined) {
  return {
    clientId: application.clientId,
    name: application.name,
    clientType: application.clientType,
    // Null for an application registered dynamically and not claimed yet.
    owner: owner ?? null,
    redirectUris: application.redirectUris,
    postLogoutRedirectUris: application.postLogoutRedirectUris,
    scopes: application.scopes,
    createdAt: application.createdAt,
    secretRotatedAt: application.secretRotatedAt,
    id: application.id,
  };
}

/**
 * The service checks a username's uniqueness only once the input is valid (the database's unique
 * index decides). An operator fixing a call should hear of a taken username with the other problems,
 * in one answer, not after fixing those.
 */
async function withUsernameTaken(users: UsersService, username: string, err: unknown): Promise<unknown> {
  if (!(err instanceof DomainError) || err.kind !== 'invalid') return err;
  const failures = failuresOf(err);
  if (failures.some((failure) => failure.field === 'username')) return err;
  const taken = await users.getByUsername(username.trim()).then(
    () => true,
    (lookup: unknown) => {
      if (lookup instanceof UserError && lookup.code === 'USER_NOT_FOUND') return false;
      throw lookup;
    },
  );
  return taken ? new InvalidInput([new UserError('USERNAME_TAKEN', 'Username is already taken', 'username'), ...failures]) : err;
}

function unknownQueue(queue: string, queues: QueueState[]): string {
  return `No job queue is named "${queue}"; the queues are ${queues.map((q) => q.queue).join(', ')}`;
}

export const DATA_COMMANDS: Record<DataCommandName, DataCommand> = {
  async 'legacy:usage'(app, flags) {
    const days = Number(optional(flags, 'days') ?? 30);
    return { days, usage: await app.get(LegacyApiUsageService).report(new Date(app.get(Clock).now().getTime() - days * 86_400_000)) };
  },
  async 'seed:demo'(app, flags) {
    // Several services write the demo: in one transaction, a seed that fails or is interrupted half-way
    // leaves nothing behind, and a rerun starts afresh instead of finding the demo "already there".
    const seed = () => app.get(DemoSeeder).run(optional(flags, 'password'));
    return interruptible(
      (signal) => inOneTransaction(app.get(DataSource), seed, signal),
      'the demo seed was rolled back; no demo data was written',
    );
  },
  async 'users:list'(app) {
    return { users: await app.get(UsersService).list() };
  },
  async 'users:create'(app, flags) {
    const users = app.get(UsersService);
    const input = { username: value(flags, 'username'), email: value(flags, 'email'), name: value(flags, 'name') };
    try {
      // An operator vouches for the address, as an administrator creating a user does on GitLab.
      const user = await users.create({ ...input, password: value(flags, 'password') }, { emailVerified: true });
      return { id: user.id, username: user.username };
    } catch (err) {
      throw await withUsernameTaken(users, input.username, err);
    }
  },
  async 'users:set-password'(app, flags) {
    return app.get(PasswordChange).byOperator(value(flags, 'user'), value(flags, 'password'));
  },
  async 'users:set-email'(app, flags) {
    const user = await app.get(EmailVerification).setByOperator(value(flags, 'user'), value(flags, 'email'));
    return { ...user, emailVerified: true };
  },
  async 'users:verify-email'(app, flags) {
    const { user, changed } = await app.get(UsersService).verifyEmail(value(flags, 'user'));
    return { id: user.id, username: user.username, email: user.email, emailVerified: true, alreadyVerified: !changed };
  },
  async 'users:block'(app, flags) {
    const user = await app.get(UsersService).setState(value(flags, 'user'), 'blocked');
    // Their sessions end as a sign-out does: the applications that got an id_token in one are told.
    const sessionsEnded = await app.get(SessionsService).endAllFor(user.id);
    return { id: user.id, username: user.username, state: user.state, sessionsEnded };
  },
  async 'users:unblock'(app, flags) {
    const user = await app.get(UsersService).setState(value(flags, 'user'), 'active');
    return { id: user.id, username: user.username, state: user.state };
  },
  async 'users:reset-second-factor'(app, flags) {
    const { user, ...removed } = await app.get(SecondFactorReset).reset(value(flags, 'user'));
    return { id: user.id, username: user.username, ...removed };
  },
  async 'tokens:create'(app, flags) {
    const user = await app.get(UsersService).getByUsername(value(flags, 'user'));
    const expires = optional(flags, 'expires-at');
    const { token, personalToken } = await app.get(PersonalTokensService).create(user.id, {
      name: value(flags, 'name'),
      scopes: parseScopeList(optional(flags, 'scopes') ?? 'api'),
      expiresAt: expires ? new Date(expires) : null,
    });
    return { id: personalToken.id, token, scopes: personalToken.scopes, expiresAt: personalToken.expiresAt };
  },
  async 'tokens:list'(app, flags) {
    const user = await app.get(UsersService).getByUsername(value(flags, 'user'));
    return { tokens: await app.get(PersonalTokensService).listForUser(user.id) };
  },
  async 'tokens:revoke'(app, flags) {
    const token = await app.get(PersonalTokensService).revoke(value(flags, 'id'));
    return { id: token.id, revokedAt: token.revokedAt };
  },
  async 'apps:list'(app, flags) {
    const users = app.get(UsersService);
    const ownerName = optional(flags, 'user');
    const owner = ownerName === undefined ? undefined : await users.getByUsername(ownerName);
    const applications = await app.get(ApplicationsService).list(owner?.id);
    const ownerIds = [...new Set(applications.flatMap((a) => (a.ownerId ? [a.ownerId] : [])))];
    const owners = new Map((await users.findManyByIds(ownerIds)).map((u) => [u.id, u.username]));
    // Owner null: registered dynamically (RFC 7591) and not claimed yet (apps:claim).
    return { applications: applications.map((a) => listedApplication(a, a.ownerId ? owners.get(a.ownerId) : null)) };
  },
  async 'apps:create'(app, flags) {
    const owner = await app.get(UsersService).getByUsername(value(flags, 'user'));
    const clientType = (optional(flags, 'type') ?? 'confidential') as ClientType;
    const input = {
      name: value(flags, 'name'),
      redirectUris: list(flags, 'redirect-uri'),
      postLogoutRedirectUris: list(flags, 'post-logout-redirect-uri'),
      scopes: parseScopeList(optional(flags, 'scopes') ?? DEFAULT_APP_SCOPES),
      clientUri: optional(flags, 'client-uri'),
      logoUri: optional(flags, 'logo-uri'),
      description: optional(flags, 'description'),
      idTokenSignedResponseAlg: optional(flags, 'id-token-signed-response-alg'),
      accessTokenFormat: optional(flags, 'access-token-format'),
      // Checked by the service (INVALID_SUBJECT_TYPE names --subject-type), as the dashboard's choice is.
      subjectType: optional(flags, 'subject-type') as Application['subjectType'] | undefined,
      backchannelLogoutUri: optional(flags, 'backchannel-logout-uri'),
      backchannelLogoutSessionRequired: flags['backchannel-logout-session-required'] !== undefined,
      authentication: {
        tokenEndpointAuthMethod: optional(flags, 'token-endpoint-auth-method'),
        jwksUri: optional(flags, 'jwks-uri'),
      },
    };
    const { application, clientSecret } = await app.get(ApplicationsService).create(owner.id, input, clientType);
    return {
      clientId: application.clientId,
      // A public client has none: the key is left out rather than null.
      ...(clientSecret === undefined ? {} : { clientSecret }),
      clientType: application.clientType,
      redirectUris: application.redirectUris,
      postLogoutRedirectUris: application.postLogoutRedirectUris,
      scopes: application.scopes,
      tokenEndpointAuthMethod: application.tokenEndpointAuthMethod,
      idTokenSignedResponseAlg: application.idTokenSignedResponseAlg,
      accessTokenFormat: application.accessTokenFormat,
      subjectType: application.subjectType,
      backchannelLogoutUri: application.backchannelLogoutUri,
      backchannelLogoutSessionRequired: application.backchannelLogoutSessionRequired,
      clientUri: application.clientUri,
      logoUri: application.logoUri,
      description: application.description,
      id: application.id,
    };
  },
  async 'apps:rotate-secret'(app, flags) {
    const applications = app.get(ApplicationsService);
    const { id } = await applications.getByClientIdOrId(value(flags, 'id'));
    const { application, clientSecret } = await applications.rotateSecret(id);
    return { clientId: application.clientId, clientSecret };
  },
  async 'apps:claim'(app, flags) {
    const owner = await app.get(UsersService).getByUsername(value(flags, 'user'));
    const applications = app.get(ApplicationsService);
    const { id } = await applications.getByClientIdOrId(value(flags, 'id'));
    const application = await applications.claim(id, owner.id);
    return { clientId: application.clientId, name: application.name, owner: owner.username, id: application.id };
  },
  async 'resources:create'(app, flags) {
    const owner = await app.get(UsersService).getByUsername(value(flags, 'user'));
    const { resourceServer, introspectionSecret } = await app.get(ResourceServersService).create(owner.id, {
      name: value(flags, 'name'),
      identifier: value(flags, 'identifier'),
      accessTokenFormat: optional(flags, 'access-token-format'),
    });
    return { ...listedResourceServer(resourceServer, owner.username), introspectionSecret };
  },
  async 'resources:list'(app, flags) {
    const users = app.get(UsersService);
    const ownerName = optional(flags, 'user');
    const owner = ownerName === undefined ? undefined : await users.getByUsername(ownerName);
    const servers = app.get(ResourceServersService);
    const found = owner ? await servers.listForOwner(owner.id) : await servers.listAll();
    const owners = new Map((await users.findManyByIds([...new Set(found.map((s) => s.ownerId))])).map((u) => [u.id, u.username]));
    return { resourceServers: found.map((s) => listedResourceServer(s, owners.get(s.ownerId) ?? null)) };
  },
  async 'resources:delete'(app, flags) {
    const deleted = await app.get(ResourceServerDeletion).delete(value(flags, 'id'));
    return { id: deleted.id, identifier: deleted.identifier, deleted: true };
  },
  async 'jobs:list'(app, flags) {
    const jobs = app.get(JobQueue);
    const state = (optional(flags, 'state') ?? 'failed') as JobListState;
    const queue = optional(flags, 'queue');
    const queues = await jobs.states();
    if (queue !== undefined && !queues.some((q) => q.queue === queue)) throw new UsageError(unknownQueue(queue, queues));
    return { queues, state, jobs: await jobs.list(state, queue, Number(optional(flags, 'limit') ?? 50)) };
  },
  async 'jobs:show'(app, flags) {
    const job = await app.get(JobQueue).find(value(flags, 'id'));
    if (!job) throw new CommandError(`No job has the id ${value(flags, 'id')} (completed jobs are kept 7 days)`);
    return job;
  },
  async 'jobs:retry'(app, flags) {
    const jobs = app.get(JobQueue);
    const ids = list(flags, 'id');
    const all = optional(flags, 'all-failed') !== undefined;
    const queue = optional(flags, 'queue');
    if (all === ids.length > 0) throw new UsageError('Give --id (once or more) or --all-failed, not both');
    if (queue !== undefined && !all) throw new UsageError('--queue goes with --all-failed');
    if (queue !== undefined) {
      const queues = await jobs.states();
      if (!queues.some((q) => q.queue === queue)) throw new UsageError(unknownQueue(queue, queues));
    }
    const results = await jobs.retry(all ? await jobs.failedIds(queue) : ids);
    return { retried: results.filter((r) => r.outcome === 'retried').length, jobs: results };
  },
  async 'keys:rotate'(app, flags) {
    const alg = optional(flags, 'alg') as SigningAlg | undefined;
    return { rotated: await app.get(SigningKeysService).rotate(alg === undefined ? SIGNING_ALGS : [alg]) };
  },
};
