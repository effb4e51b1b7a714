import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { EntityManager, IsNull, Repository } from 'typeorm';
import { CredentialVerifier } from '../../auth/credential-verifier.js';
import { generateSecret, hashSecret, SecretPrefix } from '../../auth/secret-token.js';
import { Clock } from '../../clock/clock.js';
import { APP_CONFIG } from '../../config/config.module.js';
import type { AppConfig } from '../../config/config.schema.js';
import { PURGE_BATCH_SIZE } from '../../database/batched-purge.js';
import { PreparedStatements, Statement } from '../../database/prepared-statements.js';
import { EntityTable } from '../../database/entity-table.js';
import { isUuid } from '../../database/uuid.js';
import { ApplicationEntity, type ClientType } from './application.entity.js';
import { Application, toApplication } from './application.model.js';
import { type ApplicationFields, validateApplicationInput, validateServiceAccountInput } from './application-validation.js';
import { ApplicationError } from './applications.errors.js';
import { sectorOf, type SubjectClient } from '../subjects/subjects.js';
import { type ClientAuthenticationInput, validateClientAuthentication } from './client-keys.js';

/**
 * What registers or changes an application: name, redirect URIs, scopes; where RP-initiated logout may
 * return to (none when not given); the token settings and back-channel logout; the profile users see on
 * the consent page (homepage `clientUri`, logo `logoUri`, description), each optional; and how the client
 * authenticates.
 */
export interface ApplicationInput extends ApplicationFields {
  /** How the client authenticates and, for private_key_jwt, its public keys (ClientAuthenticationInput). */
  authentication?: ClientAuthenticationInput;
}

/** How a dynamically registered application is made (ClientRegistrationService). */
export interface UnclaimedRegistration {
  /** The network it registered from (`networkKey`). */
  registeredFrom: string;
  /** Runs first in the transaction that inserts the application: checks capacity, throws to refuse. */
  admit: (manager: EntityManager) => Promise<void>;
}

/** What registering an application gives back: a confidential client's secret, shown this once. */
export interface RegisteredApplication {
  application: Application;
  /** Absent for a public client and a private_key_jwt one, which have none. */
  clientSecret?: string;
  /** The registration access token (RFC 7592) of a dynamically registered client, shown this once. */
  registrationAccessToken?: string;
}

/** The all-zero hash compared when there is no secret, so that every comparison takes the same time. */
const NO_HASH = Buffer.alloc(32);

@Injectable()
export class ApplicationsService {
  constructor(
    @InjectRepository(ApplicationEntity) private readonly applications: Repository<ApplicationEntity>,
    private readonly credentials: CredentialVerifier,
    private readonly clock: Clock,
    private readonly statements: PreparedStatements,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.table = new EntityTable<ApplicationEntity>(applications.metadata, 'a');
    this.clientById = {
      name: 'oauth_application_by_client_id',
      text: `SELECT ${this.table.select} FROM oauth_applications a WHERE a.client_id = $1`,
    };
  }

  private readonly table: EntityTable<ApplicationEntity>;
  /** The client of a token, authorize or registration request (cached by the credential verifier). */
  private readonly clientById: Statement;

  /**
   * Registers an application, confidential (the default) or public; the returned client secret is the
   * only time it is ever available. `ownerId` is null for a dynamically registered application.
   */
  async create(
    ownerId: string | null,
    input: ApplicationInput,
    clientType: ClientType = 'confidential',
    unclaimed?: UnclaimedRegistration,
  ): Promise<RegisteredApplication> {
    const valid = validateApplicationInput(input, clientType);
    const authentication = await this.validAuthentication(input, clientType);
    const usesSecret = clientType === 'confidential' && authentication.tokenEndpointAuthMethod !== 'private_key_jwt';
    const clientSecret = usesSecret ? generateSecret(SecretPrefix.oauthClientSecret) : undefined;
    // A client that registered itself manages its registration with this token (RFC 7592).
    const registrationAccessToken = unclaimed ? generateSecret(SecretPrefix.oauthRegistrationAccessToken) : undefined;
    const save = (applications: Repository<ApplicationEntity>) =>
      applications.save(
        applications.create({
          ownerId,
          ...valid,
          ...authentication,
          clientType,
          // Hex, so that no client id starts with "-" (read as a flag by command lines) or needs escaping anywhere.
          clientId: randomBytes(20).toString('hex'),
          clientSecretHash: clientSecret === undefined ? null : hashSecret(clientSecret),
          previousClientSecretHash: null,
          previousSecretCreatedAt: null,
          registrationAccessTokenHash: registrationAccessToken === undefined ? null : hashSecret(registrationAccessToken),
          secretRotatedAt: null,
          // On the service's clock, as housekeeping measures an unclaimed application's age by it.
          createdAt: this.clock.now(),
          registeredFrom: unclaimed?.registeredFrom ?? null,
          firstConsentedAt: null,
        }),
      );
    const entity = unclaimed
      ? await this.applications.manager.transaction(async (manager) => {
          await unclaimed.admit(manager);
          return save(manager.getRepository(ApplicationEntity));
        })
      : await save(this.applications);
    // What is derived from every client (the origins CORS allows) now includes this one.
    if (clientType === 'public') await this.credentials.forgetCredentials([entity.id]);
    return { application: toApplication(entity), clientSecret, registrationAccessToken };
  }

  /** A new secret; the old ones (one or two) stop working at once. Public and private_key_jwt clients have none. */
  async rotateSecret(id: string, ownerId?: string): Promise<{ application: Application; clientSecret: string }> {
    const entity = this.withSecret(await this.findEntity(id, ownerId));
    const clientSecret = generateSecret(SecretPrefix.oauthClientSecret);
    const change = {
      clientSecretHash: hashSecret(clientSecret),
      secretRotatedAt: this.clock.now(),
      previousClientSecretHash: null,
      previousSecretCreatedAt: null,
    };
    await this.applications.update({ id: entity.id }, change);
    await this.credentials.forgetCredentials([entity.id]);
    return { application: toApplication({ ...entity, ...change }), clientSecret };
  }

  /**
   * A second secret, for a rotation without downtime (as GitHub's): the new one is shown this once and
   * works at once, and so does the one before it until the owner deletes it (deleteSecret). At most two:
   * with two already, one must be deleted first.
   */
  async addSecret(id: string, ownerId?: string): Promise<{ application: Application; clientSecret: string }> {
    const entity = this.withSecret(await this.findEntity(id, ownerId));
    if (entity.previousClientSecretHash)
      throw new ApplicationError('TWO_SECRETS', 'This application has two secrets already: delete the one you no longer use first', 'id');
    const clientSecret = generateSecret(SecretPrefix.oauthClientSecret);
    const change = {
      clientSecretHash: hashSecret(clientSecret),
      secretRotatedAt: this.clock.now(),
      previousClientSecretHash: entity.clientSecretHash,
      previousSecretCreatedAt: entity.secretRotatedAt ?? entity.createdAt,
    };
    // Only if nobody added one meanwhile (another tab, another instance): never three secrets, never one lost.
    const { affected } = await this.applications.update(
      { id: entity.id, clientSecretHash: entity.clientSecretHash!, previousClientSecretHash: IsNull() },
      change,
    );
    if (!affected)
      throw new ApplicationError('TWO_SECRETS', 'This application has two secrets already: delete the one you no longer use first', 'id');
    await this.credentials.forgetCredentials([entity.id]);
    return { application: toApplication({ ...entity, ...change }), clientSecret };
  }

  /**
   * Deletes one of two secrets, the older (`previous`) or the newer (`current`); it stops working at
   * once, on every instance (the credential cache forgets the client). The last secret cannot be deleted.
   */
  async deleteSecret(id: string, which: 'current' | 'previous', ownerId?: string): Promise<Application> {
    const entity = this.withSecret(await this.findEntity(id, ownerId));
    if (!entity.previousClientSecretHash)
      throw new ApplicationError('ONE_SECRET', 'This is the application’s only secret: generate a new one first, or regenerate it', 'id');
    const change =
      which === 'previous'
        ? { previousClientSecretHash: null, previousSecretCreatedAt: null }
        : {
            clientSecretHash: entity.previousClientSecretHash,
            secretRotatedAt: entity.previousSecretCreatedAt,
            previousClientSecretHash: null,
            previousSecretCreatedAt: null,
          };
    const { affected } = await this.applications.update(
      { id: entity.id, clientSecretHash: entity.clientSecretHash!, previousClientSecretHash: entity.previousClientSecretHash },
      change,
    );
    if (!affected) throw new ApplicationError('ONE_SECRET', 'The application’s secrets changed meanwhile: look again', 'id');
    await this.credentials.forgetCredentials([entity.id]);
    return toApplication({ ...entity, ...change });
  }

  private withSecret(entity: ApplicationEntity): ApplicationEntity {
    if (entity.clientType === 'public')
      throw new ApplicationError('PUBLIC_CLIENT', 'A public client has no secret to rotate: it proves itself with PKCE alone', 'id');
    if (!entity.clientSecretHash)
      throw new ApplicationError(
        'NO_SECRET',
        'This application authenticates with private_key_jwt: it has public keys, not a secret',
        'id',
      );
    return entity;
  }

  /**
   * Changes name, redirect URIs, allowed scopes, post-logout redirect URIs, the profile (homepage, logo,
   * description), the token settings (signing algorithm, access token format; what `input` leaves out
   * stays as it was), and for a private_key_jwt client its keys when
   * given (the client type stays what it was registered as, and so does the kind of authentication: a
   * secret or keys); tokens already issued keep their scopes and format until they expire.
   */
  async update(id: string, ownerId: string, input: ApplicationInput): Promise<Application> {
    const entity = await this.findEntity(id, ownerId);
    return this.updateEntity(entity, input);
  }

  /** update() for the application whose registration the caller manages (RFC 7592), already found. */
  async updateEntity(entity: ApplicationEntity, input: ApplicationInput): Promise<Application> {
    // What `input` leaves out (undefined) stays as it was.
    const given = Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined)) as ApplicationInput;
    const valid = validateApplicationInput(
      {
        postLogoutRedirectUris: entity.postLogoutRedirectUris,
        backchannelLogoutUri: entity.backchannelLogoutUri,
        backchannelLogoutSessionRequired: entity.backchannelLogoutSessionRequired,
        clientUri: entity.clientUri,
        logoUri: entity.logoUri,
        description: entity.description,
        subjectType: entity.subjectType,
        ...given,
        idTokenSignedResponseAlg: input.idTokenSignedResponseAlg ?? entity.idTokenSignedResponseAlg,
        accessTokenFormat: input.accessTokenFormat ?? entity.accessTokenFormat,
      },
      entity.clientType,
    );
    const keysKept = entity.tokenEndpointAuthMethod === 'private_key_jwt' && !input.authentication;
    const authentication = keysKept
      ? { tokenEndpointAuthMethod: entity.tokenEndpointAuthMethod, jwks: entity.jwks, jwksUri: entity.jwksUri }
      : await this.validAuthentication(
          { ...input, authentication: { tokenEndpointAuthMethod: entity.tokenEndpointAuthMethod, ...input.authentication } },
          entity.clientType,
        );
    const wasKeys = entity.tokenEndpointAuthMethod === 'private_key_jwt';
    if (wasKeys !== (authentication.tokenEndpointAuthMethod === 'private_key_jwt')) {
      throw new ApplicationError(
        'INVALID_AUTH_METHOD',
        `This application authenticates with ${wasKeys ? 'private_key_jwt' : 'a client secret'}; that cannot change: register a new application`,
        'tokenEndpointAuthMethod',
      );
    }
    const change = { ...valid, ...authentication };
    const refusal = subjectsChangeRefusal(entity, valid);
    if (refusal) {
      // Under the row's lock, which a first code, grant or token waits for (its foreign key), so none slips in between.
      // A first consent is remembered for good: once a user approved it, subjects may have been issued, even
      // if every grant, code and token was revoked or purged since.
      await this.applications.manager.transaction(async (tx) => {
        const [row] = (await tx.query(
          `SELECT ${NEVER_USED} AND a.${this.table.column('firstConsentedAt')} IS NULL AS unused
             FROM ${this.table.name} a WHERE a.${this.table.column('id')} = $1 FOR UPDATE`,
          [entity.id],
        )) as { unused: boolean }[];
        if (!row?.unused) throw refusal;
        await tx.update(ApplicationEntity, { id: entity.id }, change);
      });
    } else {
      await this.applications.update({ id: entity.id }, change);
    }
    await this.credentials.forgetCredentials([entity.id]);
    return toApplication({ ...entity, ...change });
  }

  private validAuthentication(input: ApplicationInput, clientType: ClientType) {
    return validateClientAuthentication(input.authentication ?? {}, clientType, this.config.oauth.clientJwks.policy);
  }

  /**
   * Gives an application registered dynamically (owned by nobody) to a user, whose dashboard then lists
   * it; its registration access token stops working (the owner manages it now). An application that
   * already has an owner stays theirs.
   */
  async claim(id: string, ownerId: string): Promise<Application> {
    const entity = await this.findEntity(id);
    // The registrant's registration access token (RFC 7592) ends here: from now on the owner manages it.
    const change = { ownerId, registrationAccessTokenHash: null };
    const { affected } = await this.applications.update({ id: entity.id, ownerId: IsNull(), organizerId: IsNull() }, change);
    if (!affected) throw new ApplicationError('ALREADY_CLAIMED', 'This application already has an owner', 'id');
    await this.credentials.forgetCredentials([entity.id]);
    return toApplication({ ...entity, ...change });
  }

  /** How many dynamically registered applications nobody has claimed yet. */
  async countUnclaimed(): Promise<number> {
    return this.applications.countBy({ ownerId: IsNull(), organizerId: IsNull() });
  }

  /**
   * Deletes the applications registered dynamically before `registeredBefore`, still unclaimed and never
   * used: no grant, authorization code, access or refresh token or device authorization names them (an
   * application whose every such row has since expired and been purged counts as never used). Claimed
   * applications and those registered in the dashboard always have an owner, and are never touched.
   * Returns how many were deleted.
   */
  async purgeUnusedUnclaimed(registeredBefore: Date): Promise<number> {
    let total = 0;
    // In batches, as purgeInBatches does, each statement short enough for the statement timeout.
    for (;;) {
      const rows = (await this.applications.query(PURGE_UNUSED_UNCLAIMED, [registeredBefore, PURGE_BATCH_SIZE])) as { id: string }[];
      if (rows.length > 0) await this.credentials.forgetCredentials(rows.map((row) => row.id));
      total += rows.length;
      if (rows.length < PURGE_BATCH_SIZE) return total;
    }
  }

  async findByClientId(clientId: string): Promise<ApplicationEntity | null> {
    return clientId.length > 0 && clientId.length <= 100 ? this.applications.findOneBy({ clientId }) : null;
  }

  /**
   * The confidential application whose client id and secret these are, or null. Compares hashes in
   * constant time; a public client has no secret, so no secret authenticates it.
   */
  async authenticate(clientId: string, clientSecret: string): Promise<ApplicationEntity | null> {
    const found = await this.findClient(clientId);
    const application = found?.clientType === 'confidential' && found.clientSecretHash ? found : null;
    const actual = Buffer.from(hashSecret(clientSecret), 'hex');
    // Both secrets of a rotation compared, always both: the time taken says nothing about which matched.
    const current = timingSafeEqual(hashOrNone(application?.clientSecretHash), actual);
    const previous = timingSafeEqual(hashOrNone(application?.previousClientSecretHash), actual);
    return (current || previous) && application ? application : null;
  }

  /**
   * The application whose registration this registration access token (RFC 7592) manages, or null:
   * the client id and the token must go together. Compared in constant time, like a secret.
   */
  async findByRegistrationToken(clientId: string, token: string): Promise<ApplicationEntity | null> {
    const found = await this.findByClientId(clientId);
    const expected = hashOrNone(found?.registrationAccessTokenHash);
    const matches = timingSafeEqual(expected, Buffer.from(hashSecret(token), 'hex'));
    return matches && found?.registrationAccessTokenHash ? found : null;
  }

  /**
   * The application with this client id, for the token endpoint and the other endpoints clients call:
   * every token request starts here, so from the credential cache, otherwise a prepared statement
   * rather than a query built by the ORM.
   */
  async findClient(clientId: string): Promise<ApplicationEntity | null> {
    if (clientId.length === 0 || clientId.length > 100) return null;
    return this.credentials.client(clientId, async () => {
      const [row] = await this.statements.query(this.clientById, [clientId]);
      return row ? Object.assign(new ApplicationEntity(), this.table.map(row)) : null;
    });
  }

  /** Who owns an application, its client id and name, by id or by client id (the webhooks' checks), in `manager`'s transaction when given; null if there is none. */
  async ownership(
    by: { id: string } | { clientId: string },
    manager: EntityManager = this.applications.manager,
  ): Promise<{ id: string; clientId: string; name: string; ownerId: string | null } | null> {
    const found = await manager
      .getRepository(ApplicationEntity)
      .findOne({ where: by, select: { id: true, clientId: true, name: true, ownerId: true } });
    return found && { id: found.id, clientId: found.clientId, name: found.name, ownerId: found.ownerId };
  }

  /** The applications a user owns, by name: their ids and names only. */
  async namesOwnedBy(ownerId: string): Promise<{ id: string; name: string }[]> {
    const found = await this.applications.find({ where: { ownerId }, select: { id: true, name: true }, order: { name: 'ASC' } });
    return found.map((a) => ({ id: a.id, name: a.name }));
  }

  /**
   * Locks the application's row in the caller's transaction (FOR NO KEY UPDATE: its children's foreign
   * keys still resolve), so another module counting what it keeps per application counts one at a time.
   */
  async lockRow(tx: EntityManager, id: string): Promise<void> {
    await tx.query(`SELECT 1 FROM ${this.table.name} WHERE ${this.table.column('id')} = $1 FOR NO KEY UPDATE`, [id]);
  }

  async listForOwner(ownerId: string): Promise<Application[]> {
    return (await this.applications.find({ where: { ownerId }, order: { createdAt: 'DESC' } })).map(toApplication);
  }

  /** Every application, or one owner's, oldest first (for operators). */
  async list(ownerId?: string): Promise<Application[]> {
    const rows = await this.applications.find({ where: ownerId ? { ownerId } : {}, order: { createdAt: 'ASC', id: 'ASC' } });
    return rows.map(toApplication);
  }

  /** The application an operator names by the Application ID the dashboard shows (its client id), or by its internal id. */
  async getByClientIdOrId(clientIdOrId: string): Promise<Application> {
    const byClientId = isUuid(clientIdOrId) ? null : await this.findByClientId(clientIdOrId);
    return byClientId ? toApplication(byClientId) : this.get(clientIdOrId);
  }

  async get(id: string, ownerId?: string): Promise<Application> {
    return toApplication(await this.findEntity(id, ownerId));
  }

  /** Deletes the application; its tokens, codes and grants go with it. */
  async delete(id: string, ownerId?: string): Promise<void> {
    const entity = await this.findEntity(id, ownerId);
    const tokens = await this.statements.query<{ id: string }>(ACCESS_TOKENS_OF_APPLICATION, [entity.id]);
    await this.applications.delete({ id: entity.id });
    await this.credentials.forgetCredentials([entity.id, ...tokens.map((token) => token.id)]);
  }

  /**
   * A service account for an organizer (the caller checked that the user may make one): confidential,
   * owned by the organizer rather than a user, no redirect URIs, the granted scopes (`api`, `read_api`).
   * The secret is returned this once.
   */
  async createServiceAccount(organizerId: string, input: { name: string; scopes: string[] }): Promise<RegisteredApplication> {
    const valid = validateServiceAccountInput(input);
    const clientSecret = generateSecret(SecretPrefix.oauthClientSecret);
    const entity = await this.applications.save(
      this.applications.create({
        ownerId: null,
        organizerId,
        name: valid.name,
        scopes: valid.scopes,
        redirectUris: [],
        postLogoutRedirectUris: [],
        clientType: 'confidential',
        clientId: randomBytes(20).toString('hex'),
        clientSecretHash: hashSecret(clientSecret),
        secretRotatedAt: null,
        createdAt: this.clock.now(),
        registeredFrom: null,
        firstConsentedAt: null,
      }),
    );
    return { application: toApplication(entity), clientSecret };
  }

  /** An organizer's service accounts, newest first. */
  async listForOrganizer(organizerId: string): Promise<Application[]> {
    return (await this.applications.find({ where: { organizerId }, order: { createdAt: 'DESC', id: 'DESC' } })).map(toApplication);
  }

  /** One of an organizer's service accounts; APPLICATION_NOT_FOUND for anything else. */
  async getServiceAccount(id: string, organizerId: string): Promise<Application> {
    const entity = isUuid(id) ? await this.applications.findOneBy({ id, organizerId }) : null;
    if (!entity) throw new ApplicationError('APPLICATION_NOT_FOUND', `No service account with id "${id}"`, 'id');
    return toApplication(entity);
  }

  /**
   * Ends every live token of a service account at once, here and on the other instances (the
   * credential cache forgets them), without deleting it: its secret still gets new ones.
   */
  async revokeServiceAccountTokens(id: string, organizerId: string): Promise<number> {
    const account = await this.getServiceAccount(id, organizerId);
    const rows = await this.statements.query<{ id: string }>(REVOKE_ACCESS_TOKENS_OF_APPLICATION, [account.id, this.clock.now()]);
    await this.credentials.forgetCredentials(rows.map((row) => row.id));
    return rows.length;
  }

  private async findEntity(id: string, ownerId?: string): Promise<ApplicationEntity> {
    const entity = isUuid(id) ? await this.applications.findOneBy(ownerId ? { id, ownerId } : { id }) : null;
    if (!entity) throw new ApplicationError('APPLICATION_NOT_FOUND', `No application with id "${id}"`, 'id');
    return entity;
  }
}

function hashOrNone(hash: string | null | undefined): Buffer {
  return hash ? Buffer.from(hash, 'hex') : NO_HASH;
}

// The access tokens' ids, read here rather than through tokens/ (which depends on this folder): the
// credential cache forgets them with the application.
const REVOKE_ACCESS_TOKENS_OF_APPLICATION: Statement = {
  name: 'oauth_application_revoke_access_tokens',
  text: `UPDATE oauth_access_tokens SET revoked_at = $2 WHERE application_id = $1 AND revoked_at IS NULL RETURNING id`,
};

const ACCESS_TOKENS_OF_APPLICATION: Statement = {
  name: 'oauth_application_access_tokens',
  text: `SELECT id FROM oauth_access_tokens WHERE application_id = $1`,
};

/**
 * The error refusing this change once the application has issued tokens or grants, or null when its users'
 * `sub` stays the same: a change of subject type, or for a pairwise client of its sector (the host of its
 * redirect URIs), would give every user a new `sub`, which its clients would take for another person.
 */
function subjectsChangeRefusal(before: SubjectClient, after: SubjectClient): ApplicationError | null {
  const AFTER_USE = 'once it has issued tokens or grants: register a new application instead';
  if (before.subjectType !== after.subjectType) {
    return new ApplicationError(
      'SUBJECTS_IN_USE',
      `The subject type cannot change from ${before.subjectType} to ${after.subjectType} ${AFTER_USE} (every user's "sub" would change)`,
      'subjectType',
    );
  }
  if (after.subjectType !== 'pairwise') return null;
  const [was, is] = [sectorOf(before.redirectUris), sectorOf(after.redirectUris)];
  if (was === is) return null;
  return new ApplicationError(
    'SUBJECTS_IN_USE',
    `A pairwise application's redirect URIs cannot move from ${was} to ${is} ${AFTER_USE} (the host computes every user's "sub")`,
    'redirectUris',
  );
}

/**
 * SQL: application `a` was never used, as far as the database remembers: no grant, authorization code,
 * access or refresh token or device authorization names it. Such an application, unclaimed, is deleted
 * OAUTH_UNCLAIMED_APPLICATION_TTL_SECONDS after it registered.
 */
export const NEVER_USED = `NOT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.application_id = a.id)
          AND NOT EXISTS (SELECT 1 FROM oauth_authorization_codes c WHERE c.application_id = a.id)
          AND NOT EXISTS (SELECT 1 FROM oauth_access_tokens t WHERE t.application_id = a.id)
          AND NOT EXISTS (SELECT 1 FROM oauth_refresh_tokens r WHERE r.application_id = a.id)
          AND NOT EXISTS (SELECT 1 FROM oauth_device_authorizations d WHERE d.application_id = a.id)`;

/**
 * One statement per batch of at most $2. SKIP LOCKED passes over an application whose first code, grant or token is being
 * written at this moment (the foreign key check holds a lock on its row), so that use wins; the next
 * run then sees it used. A first use that commits between this statement's snapshot and its lock is
 * not seen, and is deleted with the application (or, the other way round, fails on the foreign key):
 * a window of milliseconds, for an application nobody used since it registered at least an hour ago.
 */
const PURGE_UNUSED_UNCLAIMED = `
  WITH purged AS (
    DELETE FROM oauth_applications
     WHERE id IN (
       SELECT a.id FROM oauth_applications a
        WHERE a.owner_id IS NULL AND a.organizer_id IS NULL
          AND a.created_at <= $1
          AND ${NEVER_USED}
        LIMIT $2
          FOR UPDATE SKIP LOCKED)
    RETURNING id)
  SELECT id FROM purged`;
