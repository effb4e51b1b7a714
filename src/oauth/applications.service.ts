import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { EntityManager, IsNull, Repository } from 'typeorm';
import { CredentialVerifier } from '../auth/credential-verifier.js';
import { generateSecret, hashSecret, SecretPrefix } from '../auth/secret-token.js';
import { Clock } from '../clock/clock.js';
import { PURGE_BATCH_SIZE } from '../database/batched-purge.js';
import { PreparedStatements, Statement } from '../database/prepared-statements.js';
import { isUuid } from '../database/uuid.js';
import { AccessTokenEntity } from './access-token.entity.js';
import { ApplicationEntity, ClientType } from './application.entity.js';
import { Application, toApplication } from './application.model.js';
import { validateApplicationInput } from './application-validation.js';
import { ApplicationError } from './applications.errors.js';

export interface ApplicationInput {
  name: string;
  redirectUris: string[];
  scopes: string[];
  /** Where RP-initiated logout may return to; none when not given. */
  postLogoutRedirectUris?: string[];
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
  /** Absent for a public client, which has none. */
  clientSecret?: string;
}

@Injectable()
export class ApplicationsService {
  constructor(
    @InjectRepository(ApplicationEntity) private readonly applications: Repository<ApplicationEntity>,
    @InjectRepository(AccessTokenEntity) private readonly accessTokens: Repository<AccessTokenEntity>,
    private readonly credentials: CredentialVerifier,
    private readonly clock: Clock,
    private readonly statements: PreparedStatements,
  ) {}

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
    const clientSecret = clientType === 'confidential' ? generateSecret(SecretPrefix.oauthClientSecret) : undefined;
    const save = (applications: Repository<ApplicationEntity>) =>
      applications.save(
        applications.create({
          ownerId,
          ...valid,
          clientType,
          // Hex, so that no client id starts with "-" (read as a flag by command lines) or needs escaping anywhere.
          clientId: randomBytes(20).toString('hex'),
          clientSecretHash: clientSecret === undefined ? null : hashSecret(clientSecret),
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
    return { application: toApplication(entity), clientSecret };
  }

  /** A new secret; the old one stops working at once. Public clients have none. */
  async rotateSecret(id: string, ownerId?: string): Promise<{ application: Application; clientSecret: string }> {
    const entity = await this.findEntity(id, ownerId);
    if (entity.clientType === 'public')
      throw new ApplicationError('PUBLIC_CLIENT', 'A public client has no secret to rotate: it proves itself with PKCE alone', 'id');
    const clientSecret = generateSecret(SecretPrefix.oauthClientSecret);
    entity.clientSecretHash = hashSecret(clientSecret);
    entity.secretRotatedAt = this.clock.now();
    await this.applications.update(
      { id: entity.id },
      { clientSecretHash: entity.clientSecretHash, secretRotatedAt: entity.secretRotatedAt },
    );
    await this.credentials.forgetCredentials([entity.id]);
    return { application: toApplication(entity), clientSecret };
  }

  /**
   * Changes name, redirect URIs, allowed scopes and post-logout redirect URIs (the client type stays
   * what it was registered as); tokens already issued keep their scopes until they expire.
   */
  async update(id: string, ownerId: string, input: ApplicationInput): Promise<Application> {
    const entity = await this.findEntity(id, ownerId);
    const valid = validateApplicationInput({ postLogoutRedirectUris: entity.postLogoutRedirectUris, ...input }, entity.clientType);
    await this.applications.update({ id: entity.id }, valid);
    await this.credentials.forgetCredentials([entity.id]);
    return toApplication({ ...entity, ...valid });
  }

  /**
   * Gives an application registered dynamically (owned by nobody) to a user, whose dashboard then lists
   * it. An application that already has an owner stays theirs.
   */
  async claim(id: string, ownerId: string): Promise<Application> {
    const entity = await this.findEntity(id);
    const { affected } = await this.applications.update({ id: entity.id, ownerId: IsNull() }, { ownerId });
    if (!affected) throw new ApplicationError('ALREADY_CLAIMED', 'This application already has an owner', 'id');
    await this.credentials.forgetCredentials([entity.id]);
    return toApplication({ ...entity, ownerId });
  }

  /** How many dynamically registered applications nobody has claimed yet. */
  async countUnclaimed(): Promise<number> {
    return this.applications.countBy({ ownerId: IsNull() });
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
    const application = found?.clientType === 'confidential' ? found : null;
    const expected = Buffer.from(application?.clientSecretHash ?? '0'.repeat(64), 'hex');
    const actual = Buffer.from(hashSecret(clientSecret), 'hex');
    return timingSafeEqual(expected, actual) && application ? application : null;
  }

  /**
   * The application with this client id, for the token endpoint and the other endpoints clients call:
   * every token request starts here, so from the credential cache, otherwise a prepared statement
   * rather than a query built by the ORM.
   */
  async findClient(clientId: string): Promise<ApplicationEntity | null> {
    if (clientId.length === 0 || clientId.length > 100) return null;
    return this.credentials.client(clientId, async () => {
      const rows = await this.statements.query(FIND_BY_CLIENT_ID, [clientId]);
      return rows[0] ? toEntity(rows[0]) : null;
    });
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
    const tokens = await this.accessTokens.find({ select: { id: true }, where: { applicationId: entity.id } });
    await this.applications.delete({ id: entity.id });
    await this.credentials.forgetCredentials([entity.id, ...tokens.map((token) => token.id)]);
  }

  private async findEntity(id: string, ownerId?: string): Promise<ApplicationEntity> {
    const entity = isUuid(id) ? await this.applications.findOneBy(ownerId ? { id, ownerId } : { id }) : null;
    if (!entity) throw new ApplicationError('APPLICATION_NOT_FOUND', `No application with id "${id}"`, 'id');
    return entity;
  }
}

const FIND_BY_CLIENT_ID: Statement = {
  name: 'oauth_application_by_client_id',
  text: `SELECT id, owner_id, name, client_id, client_type, client_secret_hash, redirect_uris, scopes, post_logout_redirect_uris,
                created_at, updated_at, secret_rotated_at, registered_from, first_consented_at
           FROM oauth_applications WHERE client_id = $1`,
};

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
        WHERE a.owner_id IS NULL
          AND a.created_at <= $1
          AND ${NEVER_USED}
        LIMIT $2
          FOR UPDATE SKIP LOCKED)
    RETURNING id)
  SELECT id FROM purged`;

function toEntity(row: Record<string, unknown>): ApplicationEntity {
  return Object.assign(new ApplicationEntity(), {
    id: row.id as string,
    ownerId: row.owner_id as string | null,
    name: row.name as string,
    clientId: row.client_id as string,
    clientType: row.client_type as ClientType,
    clientSecretHash: row.client_secret_hash as string | null,
    redirectUris: row.redirect_uris as string[],
    scopes: row.scopes as string[],
    postLogoutRedirectUris: row.post_logout_redirect_uris as string[],
    createdAt: row.created_at as Date,
    updatedAt: row.updated_at as Date,
    secretRotatedAt: (row.secret_rotated_at as Date | null) ?? null,
    registeredFrom: (row.registered_from as string | null) ?? null,
    firstConsentedAt: (row.first_consented_at as Date | null) ?? null,
  });
}
