import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG } from '../../../config/config.module.js';
import type { AppConfig } from '../../../config/config.schema.js';
import { narrowResources } from '../../resource-indicator.js';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { hashSecret, isWellFormedSecret, SecretPrefix } from '../../../auth/secret-token.js';
import { Clock } from '../../../clock/clock.js';
import { toAmr } from '../../../auth/authentication-methods.js';
import { EntityTable } from '../../../database/entity-table.js';
import { UsersService, type UserClaimsRow } from '../../../users/users.service.js';
import { DeviceAuthorizationEntity } from '../../device/device-authorization.entity.js';
import { AccessTokenEntity } from '../../tokens/access-token.entity.js';
import { AccessTokensService } from '../../tokens/access-tokens.service.js';
import { ApplicationEntity } from '../../clients/application.entity.js';
import type { TokenRequestParams } from '../../clients/client-authentication.js';
import { OAuthError } from '../../oauth.errors.js';
import { RefreshTokensService } from '../../tokens/refresh-tokens.service.js';
import { IssuedGrant, TokenGrant, TokenResponse, TokenResponseBuilder } from '../token-response.js';

export const DEVICE_CODE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';

/** RFC 8628 §3.5: a polling client that comes too early has its interval raised by this much. */
const SLOW_DOWN_SECONDS = 5;

/** What a poll reads of a device authorization (not its hashes: the statement found it by one). */
const DEVICE_READ = [
  'id',
  'applicationId',
  'scopes',
  'resources',
  'status',
  'userId',
  'authTime',
  'amr',
  'intervalSeconds',
  'lastPolledAt',
  'expiresAt',
  'consumedAt',
  'accessTokenId',
  'sessionId',
] as const satisfies readonly (keyof DeviceAuthorizationEntity)[];
type Device = Pick<DeviceAuthorizationEntity, (typeof DEVICE_READ)[number]>;

/** The user's claims beside the authorization (null until someone approved it: a LEFT JOIN). */
type ClaimsOrNull = { [K in keyof UserClaimsRow]: UserClaimsRow[K] | null };

type Poll =
  | { issued: { accessToken: IssuedGrant['accessToken']; device: Device; user: ClaimsOrNull; audience: string[] } }
  | { refused: OAuthError }
  | { replayed: string | null };

/**
 * The device code grant at the token endpoint (RFC 8628 §3.4–3.5): `authorization_pending` until the
 * user decides, `slow_down` to a client polling faster than its interval (which then grows),
 * `access_denied`, `expired_token`; once approved, one token, to the client the code was issued to.
 * Each poll reads and updates the authorization under its row lock, so of concurrent polls of an
 * approved code exactly one gets the token. A device code presented again after it was exchanged revokes
 * what it issued, the access token and its refresh tokens, as a replayed authorization code does (RFC
 * 6749 §4.1.2, §10.5): the code is in other hands.
 */
@Injectable()
export class DeviceCodeGrant implements TokenGrant {
  readonly grantType = DEVICE_CODE_GRANT_TYPE;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly accessTokens: AccessTokensService,
    private readonly clock: Clock,
    private readonly responses: TokenResponseBuilder,
    private readonly refreshTokens: RefreshTokensService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    users: UsersService,
  ) {
    this.devices = EntityTable.of(dataSource, DeviceAuthorizationEntity, 'd').pick(...DEVICE_READ);
    this.pollSql = `SELECT ${this.devices.select}, ${users.claimsAs('u')}
           FROM oauth_device_authorizations d LEFT JOIN users u ON u.id = d.user_id
          WHERE d.device_code_hash = $1
            FOR UPDATE OF d`;
  }

  private readonly devices: EntityTable<Device, DeviceAuthorizationEntity>;
  /** The authorization of a device code and its user, locked for the rest of the poll. */
  private readonly pollSql: string;

  async exchange(application: ApplicationEntity, params: TokenRequestParams, resources: readonly string[]): Promise<TokenResponse> {
    if (!params.device_code) throw new OAuthError('invalid_request', 'device_code is required');
    if (!isWellFormedSecret(params.device_code, SecretPrefix.oauthDeviceCode))
      throw new OAuthError('invalid_grant', 'The device code is unknown');
    const poll = await this.poll(application, hashSecret(params.device_code), resources);
    if ('refused' in poll) throw poll.refused;
    if ('replayed' in poll) {
      if (poll.replayed) {
        await this.accessTokens.revoke([poll.replayed]);
        await this.refreshTokens.revokeFamilyOf(poll.replayed);
      }
      throw new OAuthError('invalid_grant', 'The device code was already used; the tokens issued from it are revoked');
    }
    const { accessToken, device, user, audience } = poll.issued;
    return this.responses.build({
      application,
      accessToken,
      user: {
        id: device.userId!,
        username: user.username!,
        name: user.name!,
        email: user.email!,
        emailVerified: user.email_verified === true,
      },
      scopes: device.scopes,
      audience,
      authorizedResources: device.resources,
      authTime: device.authTime!,
      amr: toAmr(device.amr ?? ['pwd']),
      nonce: null,
      sessionId: device.sessionId,
    });
  }

  private poll(application: ApplicationEntity, deviceCodeHash: string, requested: readonly string[]): Promise<Poll> {
    const now = this.clock.now();
    return this.dataSource.transaction(async (manager): Promise<Poll> => {
      const [found] = (await manager.query(this.pollSql, [deviceCodeHash])) as ClaimsOrNull[];
      // Another client's device code is answered as an unknown one, and its polling state is left alone.
      const row = found && this.devices.map(found);
      if (!row || row.applicationId !== application.id) return refuse('invalid_grant', 'The device code is unknown');
      if (row.consumedAt) return { replayed: row.accessTokenId };
      if (row.expiresAt <= now) return refuse('expired_token', 'The device code has expired: start a new device authorization');
      if (row.status === 'denied') return refuse('access_denied', 'The user denied the request');
      if (row.status === 'approved') {
        if (found.user_state !== 'active') return refuse('invalid_grant', 'The user is no longer active');
        // RFC 8707 §2.2: the resources asked for now, within those of the authorization (none: Agora's API).
        let audience: string[];
        try {
          audience = narrowResources(row.resources, requested, this.config.baseUrl);
        } catch (err) {
          if (err instanceof OAuthError) return { refused: err };
          throw err;
        }
        const issued = this.accessTokens.prepare(application.accessTokenFormat);
        await manager.getRepository(AccessTokenEntity).insert({
          id: issued.id,
          tokenHash: issued.tokenHash,
          applicationId: application.id,
          userId: row.userId!,
          scopes: row.scopes,
          audience,
          createdAt: now,
          expiresAt: issued.expiresAt,
        });
        await manager.update(DeviceAuthorizationEntity, { id: row.id }, { consumedAt: now, accessTokenId: issued.id, lastPolledAt: now });
        return {
          issued: { accessToken: { token: issued.token, id: issued.id, expiresIn: issued.expiresIn }, device: row, user: found, audience },
        };
      }
      const early = row.lastPolledAt !== null && now.getTime() - row.lastPolledAt.getTime() < row.intervalSeconds * 1000;
      const interval = early ? row.intervalSeconds + SLOW_DOWN_SECONDS : row.intervalSeconds;
      await manager.update(DeviceAuthorizationEntity, { id: row.id }, { lastPolledAt: now, intervalSeconds: interval });
      return early
        ? refuse('slow_down', `Polled too soon: wait at least ${interval} seconds between requests`)
        : refuse('authorization_pending', 'The user has not yet approved the request');
    });
  }
}

function refuse(code: ConstructorParameters<typeof OAuthError>[0], description: string): Poll {
  return { refused: new OAuthError(code, description) };
}
