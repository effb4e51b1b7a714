import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { MoreThan, QueryFailedError, Repository } from 'typeorm';
import { generateSecret, hashSecret, SecretPrefix } from '../../auth/secret-token.js';
import { Clock } from '../../clock/clock.js';
import type { AuthMethod } from '../../auth/authentication-methods.js';
import { APP_CONFIG } from '../../config/config.module.js';
import { purgeInBatches } from '../../database/batched-purge.js';
import type { AppConfig } from '../../config/config.schema.js';
import { OAuthError } from '../oauth.errors.js';
import { isServiceAccount } from '../clients/application.model.js';
import { ApplicationEntity } from '../clients/application.entity.js';
import type { TokenRequestParams } from '../clients/client-authentication.js';
import { checkRequestedScopes } from '../authorize/authorization-request.js';
import { DeviceAuthorizationEntity } from './device-authorization.entity.js';
import { GrantsService } from '../consent/grants.service.js';
import { formatUserCode, generateUserCode } from './user-code.js';
import { showsUnverifiedNotice } from '../interaction/interaction-rules.js';
import { type ApplicationProfile, applicationProfileOf, type ConsentResourceServer } from '../authorize/consent.view.js';
import { ResourceServersService } from '../resources/resource-servers.service.js';
import type { ResourceServer } from '../resources/resource-server.model.js';
import { UsersService } from '../../users/users.service.js';

/** The device authorization response (RFC 8628 §3.2). */
export interface DeviceAuthorizationResponse {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

/** The least number of seconds between two polls of the token endpoint, at first (RFC 8628 §3.2). */
export const DEVICE_POLL_INTERVAL_SECONDS = 5;

/** What the page shows about a user code, when it names a live device authorization. */
export type DeviceCodeLookup =
  | {
      found: 'pending';
      applicationName: string;
      selfRegistered: boolean;
      /** What its owner says of it, as the consent page shows it. */
      profile: ApplicationProfile;
      scopes: string[];
      /** The registered resource servers the tokens are for (RFC 8707), named for the user. */
      resourceServers: ConsentResourceServer[];
      userCode: string;
    }
  | { found: 'expired' | 'decided' }
  | { found: false };

export type DeviceDecision = 'approved' | 'denied' | 'expired' | 'decided' | 'unknown';

/**
 * The device authorization endpoint and the page's side of the device flow (RFC 8628 §3.1–3.3): a
 * client starts an authorization, the signed-in user finds it by its user code, and approves or
 * denies it once. The client's polling is DeviceCodeGrant's.
 */
@Injectable()
export class DeviceAuthorizationsService {
  constructor(
    @InjectRepository(DeviceAuthorizationEntity) private readonly devices: Repository<DeviceAuthorizationEntity>,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly grants: GrantsService,
    private readonly users: UsersService,
    private readonly resourceServers: ResourceServersService,
  ) {}

  async start(
    application: ApplicationEntity,
    params: TokenRequestParams,
    resources: readonly string[] = [],
  ): Promise<DeviceAuthorizationResponse> {
    // A service account acts for its organizer, never for a person who would approve it.
    if (isServiceAccount(application))
      throw new OAuthError('unauthorized_client', 'A service account uses client_credentials, never a person’s approval');
    const scopes = checkRequestedScopes(params.scope, application);
    const deviceCode = generateSecret(SecretPrefix.oauthDeviceCode);
    const now = this.clock.now();
    const ttl = this.config.oauth.deviceCodeTtlMs;
    for (let attempt = 1; ; attempt++) {
      const userCode = generateUserCode();
      try {
        await this.devices.insert({
          deviceCodeHash: hashSecret(deviceCode),
          userCodeHash: hashSecret(userCode),
          applicationId: application.id,
          scopes,
          resources: [...resources],
          status: 'pending',
          intervalSeconds: DEVICE_POLL_INTERVAL_SECONDS,
          createdAt: now,
          expiresAt: new Date(now.getTime() + ttl),
        });
      } catch (err) {
        // Two live authorizations with one user code: draw another (1 in 25 billion per live code).
        if (attempt < 5 && isUniqueViolation(err)) continue;
        throw err;
      }
      const verificationUri = `${this.config.baseUrl}/oauth/device`;
      const shown = formatUserCode(userCode);
      return {
        device_code: deviceCode,
        user_code: shown,
        verification_uri: verificationUri,
        verification_uri_complete: `${verificationUri}?user_code=${shown}`,
        expires_in: ttl / 1000,
        interval: DEVICE_POLL_INTERVAL_SECONDS,
      };
    }
  }

  /** The authorization a (normalised) user code names, for the page. */
  async lookup(userCode: string): Promise<DeviceCodeLookup> {
    const device = await this.devices.findOne({ where: { userCodeHash: hashSecret(userCode) }, relations: { application: true } });
    if (!device?.application) return { found: false };
    if (device.expiresAt <= this.clock.now()) return { found: 'expired' };
    if (device.status !== 'pending') return { found: 'decided' };
    const { ownerId } = device.application;
    const owner = ownerId ? await this.users.findById(ownerId) : null;
    // Where the tokens will be used besides Agora: deleted since, a resource server is no longer shown (nor will its token be issued).
    const servers = await this.resourceServersOf(device);
    const serverOwners = new Map(
      (await this.users.findManyByIds([...new Set(servers.map((s) => s.ownerId))])).map((u) => [u.id, u.name] as const),
    );
    return {
      found: 'pending',
      applicationName: device.application.name,
      selfRegistered: showsUnverifiedNotice(device.application),
      profile: applicationProfileOf(device.application, owner && { name: owner.name, username: owner.username }),
      scopes: device.scopes,
      resourceServers: servers.map((s) => ({ name: s.name, identifier: s.identifier, owner: serverOwners.get(s.ownerId) ?? null })),
      userCode: formatUserCode(userCode),
    };
  }

  /**
   * Approves or denies a pending, unexpired authorization: once, whoever tries at the same moment. An
   * approval is remembered like one given on the consent page, so the application is listed under
   * "Authorized applications", where revoking it ends what the device holds (its refresh tokens too).
   * How the user signed in (auth_time, amr) and in which browser session (its `sid`) is recorded for the id_token; RFC 8628 has no acr_values, so
   * the approval asks for nothing more than the session has.
   */
  async decide(
    userCode: string,
    user: { id: string; authTime: Date; amr: readonly AuthMethod[]; sessionId: string },
    approve: boolean,
  ): Promise<DeviceDecision> {
    const now = this.clock.now();
    const userCodeHash = hashSecret(userCode);
    const result = await this.devices.update(
      { userCodeHash, status: 'pending', expiresAt: MoreThan(now) },
      {
        status: approve ? 'approved' : 'denied',
        userId: user.id,
        authTime: user.authTime,
        amr: [...user.amr],
        sessionId: user.sessionId,
        decidedAt: now,
      },
    );
    if (result.affected === 1) {
      if (!approve) return 'denied';
      const approved = await this.devices.findOneOrFail({ where: { userCodeHash } });
      await this.grants.remember(user.id, approved.applicationId, approved.scopes, await this.resourceServersOf(approved));
      return 'approved';
    }
    const device = await this.devices.findOne({ where: { userCodeHash } });
    if (!device) return 'unknown';
    return device.expiresAt <= now ? 'expired' : 'decided';
  }

  /** The registered resource servers a device authorization names besides Agora's API (no query when it names none). */
  private resourceServersOf(device: { resources: string[] }): Promise<ResourceServer[]> {
    return this.resourceServers.findByIdentifiers(device.resources.filter((r) => r !== this.config.baseUrl));
  }

  /**
   * Deletes device authorizations that expired more than a day ago (kept that long so a device code
   * presented again is still told apart from an unknown one).
   */
  async purgeExpired(): Promise<number> {
    const before = new Date(this.clock.now().getTime() - RETENTION_MS);
    return purgeInBatches((text, values) => this.devices.query(text, values), 'oauth_device_authorizations', 't.expires_at <= $1', [
      before,
    ]);
  }
}

const RETENTION_MS = 24 * 3_600_000;

function isUniqueViolation(err: unknown): boolean {
  return err instanceof QueryFailedError && (err.driverError as { code?: string } | undefined)?.code === '23505';
}
