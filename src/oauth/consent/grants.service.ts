import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { CredentialVerifier } from '../../auth/credential-verifier.js';
import { Clock } from '../../clock/clock.js';
import { isUuid } from '../../database/uuid.js';
import { SecurityNotices } from '../../security-notices/security-notices.js';
import { AccessTokensService } from '../tokens/access-tokens.service.js';
import { ApplicationEntity } from '../clients/application.entity.js';
import { ApplicationError } from '../clients/applications.errors.js';
import { GrantEntity } from './grant.entity.js';
import { ResourceServersService } from '../resources/resource-servers.service.js';
import { RefreshTokensService } from '../tokens/refresh-tokens.service.js';

export interface AuthorizedApplication {
  applicationId: string;
  name: string;
  scopes: string[];
  /** The resource servers (RFC 8707) approved besides Agora's API that still exist. */
  resourceServers: { name: string; identifier: string }[];
  createdAt: Date;
  updatedAt: Date;
}

/** Remembered consent: what each user has approved for each application. */
@Injectable()
export class GrantsService {
  constructor(
    @InjectRepository(GrantEntity) private readonly grants: Repository<GrantEntity>,
    private readonly accessTokens: AccessTokensService,
    private readonly refreshTokens: RefreshTokensService,
    private readonly credentials: CredentialVerifier,
    private readonly clock: Clock,
    private readonly notices: SecurityNotices,
    private readonly resourceServers: ResourceServersService,
  ) {}

  /** True when the user already approved every one of these scopes, and these resource servers, for the application. */
  async covers(userId: string, applicationId: string, scopes: string[], resourceServers: readonly { id: string }[] = []): Promise<boolean> {
    const grant = await this.grants.findOneBy({ userId, applicationId });
    return (
      !!grant &&
      scopes.every((s) => grant.scopes.includes(s)) &&
      // Each resource server with every scope asked for: a scope approved for Agora's API alone, or for another
      // resource server, was never shown beside this one.
      resourceServers.every((server) => scopes.every((s) => grant.resourceServerScopes[server.id]?.includes(s)))
    );
  }

  /**
   * Records the user's approval (the consent page, a device flow approval), and with it the
   * application's first consent, whether or not a grant already existed: an approval always vouches
   * for the application. An approval that gives the application something it did not have (a first
   * approval, new scopes or a resource server not approved before) tells the user by e-mail, in the same
   * transaction.
   */
  async remember(
    userId: string,
    applicationId: string,
    scopes: string[],
    resourceServers: readonly { id: string; name: string; identifier: string }[] = [],
  ): Promise<void> {
    await this.grants.manager.transaction(async (tx) => {
      const grants = tx.getRepository(GrantEntity);
      const existing = await grants.findOne({ where: { userId, applicationId }, lock: { mode: 'pessimistic_write' } });
      const merged = [...new Set([...(existing?.scopes ?? []), ...scopes])];
      const resourceServerScopes = { ...existing?.resourceServerScopes };
      // Those this approval gives something they did not have (a first approval, or more scopes).
      const newServers = resourceServers.filter((server) => {
        const before = resourceServerScopes[server.id] ?? [];
        const after = [...new Set([...before, ...scopes])];
        resourceServerScopes[server.id] = after;
        return after.length > before.length;
      });
      await grants.upsert({ userId, applicationId, scopes: merged, resourceServerScopes }, ['userId', 'applicationId']);
      if (existing && merged.length === existing.scopes.length && newServers.length === 0) return;
      const application = await tx.findOne(ApplicationEntity, { select: { name: true }, where: { id: applicationId } });
      await this.notices.notify(
        userId,
        {
          kind: 'application-authorized',
          application: application?.name ?? applicationId,
          scopes: merged,
          // What this approval added: the user approved these on the page just now.
          ...(newServers.length > 0 ? { resourceServers: newServers.map((server) => `${server.name} (${server.identifier})`) } : {}),
        },
        { tx },
      );
    });
    await this.recordFirstConsent(applicationId);
  }

  /**
   * An authorization approved by an earlier grant, without asking (the authorization endpoint): the
   * grant already vouched for the application, so this only records a first consent that is missing,
   * and costs nothing (no query) once it is recorded.
   */
  async approvedByGrant(application: Pick<ApplicationEntity, 'id' | 'firstConsentedAt'>): Promise<void> {
    if (application.firstConsentedAt === null) await this.recordFirstConsent(application.id);
  }

  /**
   * A self-registered application someone consented to is trusted for CORS from then on (ClientCors).
   * The update fires the change notification, so every instance recomputes its allowed origins before
   * the browser app, sent back with its code, calls the token endpoint. On the service's clock, like
   * every other time the OAuth server records.
   */
  private async recordFirstConsent(applicationId: string): Promise<void> {
    const [, affected] = (await this.grants.query(
      'UPDATE oauth_applications SET first_consented_at = $2 WHERE id = $1 AND first_consented_at IS NULL',
      [applicationId, this.clock.now()],
    )) as [unknown, number];
    if (affected > 0) await this.credentials.forgetCredentials([applicationId]);
  }

  async listForUser(userId: string): Promise<AuthorizedApplication[]> {
    const rows = await this.grants.find({ where: { userId }, relations: { application: true }, order: { updatedAt: 'DESC' } });
    return this.described(rows);
  }

  /** The user's approval of one application; APPLICATION_NOT_FOUND when there is none. */
  async getForUser(userId: string, applicationId: string): Promise<AuthorizedApplication> {
    const grant = isUuid(applicationId)
      ? await this.grants.findOne({ where: { userId, applicationId }, relations: { application: true } })
      : null;
    if (!grant) throw new ApplicationError('APPLICATION_NOT_FOUND', 'You have not authorized this application', 'applicationId');
    const [described] = await this.described([grant]);
    return described!;
  }

  /** The approvals as the dashboard lists them, each with the resource servers it names (one query for all). */
  private async described(grants: GrantEntity[]): Promise<AuthorizedApplication[]> {
    const servers = new Map(
      (await this.resourceServers.findByIds([...new Set(grants.flatMap((g) => Object.keys(g.resourceServerScopes)))])).map(
        (s) => [s.id, s] as const,
      ),
    );
    return grants.map((g) => ({
      applicationId: g.applicationId,
      name: g.application!.name,
      scopes: g.scopes,
      resourceServers: Object.keys(g.resourceServerScopes).flatMap((id) => {
        const server = servers.get(id);
        return server ? [{ name: server.name, identifier: server.identifier }] : [];
      }),
      createdAt: g.createdAt,
      updatedAt: g.updatedAt,
    }));
  }

  /** Forgets the approval and revokes every token, access and refresh, the user gave the application. */
  async revoke(userId: string, applicationId: string): Promise<void> {
    await this.grants.delete({ userId, applicationId });
    await this.refreshTokens.revokeForUserAndApplication(userId, applicationId);
    await this.accessTokens.revokeForUserAndApplication(userId, applicationId);
  }
}
