import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG } from '../../config/config.module.js';
import type { AppConfig } from '../../config/config.schema.js';
import { AccessTokensService } from '../tokens/access-tokens.service.js';
import { ResourceServersService } from '../resources/resource-servers.service.js';
import type { AuthMethod } from '../../auth/authentication-methods.js';
import type { ApplicationEntity } from '../clients/application.entity.js';
import type { TokenRequestParams } from '../clients/client-authentication.js';
import { ClaimsUser, IdTokenService } from '../keys/id-token.service.js';
import { JwtAccessTokens } from '../tokens/jwt-access-tokens.js';
import { RefreshTokensService } from '../tokens/refresh-tokens.service.js';
import { BackchannelLogout } from '../logout/backchannel/backchannel-logout.js';
import { Subjects } from '../subjects/subjects.js';

/** The successful token response (RFC 6749 §5.1), whichever grant answered. */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope: string;
  id_token?: string;
  /** Only when `offline_access` was granted, or in place of the refresh token just used (rotation). */
  refresh_token?: string;
}

/** A grant type the token endpoint dispatches to (token/grants/): its own parameters and checks, then the response. */
export interface TokenGrant {
  readonly grantType: string;
  /**
   * `resources`: the RFC 8707 `resource` values of the request, resolved (BASE_URL for Agora's API,
   * registered identifiers), empty when none was sent.
   */
  exchange(application: ApplicationEntity, params: TokenRequestParams, resources: readonly string[]): Promise<TokenResponse>;
}

/** What a grant hands the builder: the access token it stored and the authorization it comes from. */
export interface IssuedGrant {
  application: Pick<
    ApplicationEntity,
    'id' | 'clientId' | 'idTokenSignedResponseAlg' | 'accessTokenFormat' | 'backchannelLogoutUri' | 'subjectType' | 'redirectUris'
  >;
  accessToken: { token: string; id: string; expiresIn: number };
  /** Null for a service account's token (`client_credentials`): no person, so no refresh token nor id_token. */
  user: ClaimsUser | null;
  scopes: string[];
  /** Where the access token may be used (RFC 8707), as stored with it: empty for Agora's API alone. */
  audience: readonly string[];
  /** What a new refresh token family is authorized for (the code's resources); absent, the audience. */
  authorizedResources?: readonly string[];
  /** How and when the user signed in for the authorization: the id_token's auth_time, amr and acr. */
  authTime: Date;
  amr: readonly AuthMethod[];
  /** The authorization request's nonce; null for a refresh or a device (no new sign-in, or none asked). */
  nonce: string | null;
  /** The successor of a refresh token just rotated: sent instead of starting a new family. */
  rotatedRefreshToken?: string;
  /**
   * The browser session the user approved the authorization in (the code's, the device approval's, or
   * for a refresh the one its family started from): the id_token's `sid`, kept by a new refresh token
   * family, and the session whose end tells the application (back-channel logout).
   */
  sessionId?: string | null;
}

/**
 * The one place a token response is built, for every grant: the access token (the stored opaque one,
 * or for a client whose format is `jwt` an RFC 9068 JWT signed here, after the database work); a refresh token, the
 * rotated one or, with `offline_access`, a new family beside the access token; and with `openid` an
 * id_token (OpenID Connect Core §3.1.3.3, §12.2), with the browser session's `sid` when the grant came
 * from one (Back-Channel Logout 1.0 §2.1).
 */
@Injectable()
export class TokenResponseBuilder {
  constructor(
    private readonly idTokens: IdTokenService,
    private readonly refreshTokens: RefreshTokensService,
    private readonly jwtAccessTokens: JwtAccessTokens,
    private readonly backchannel: BackchannelLogout,
    private readonly subjects: Subjects,
    private readonly resourceServers: ResourceServersService,
    private readonly accessTokens: AccessTokensService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async build(grant: IssuedGrant): Promise<TokenResponse> {
    const { application, scopes } = grant;
    const jwt = application.accessTokenFormat === 'jwt' || (await this.forJwtResourceServer(grant.audience));
    // Stored with an opaque token's lifetime (the client's format), signed as a JWT: its row lives as long as the JWT.
    const accessToken =
      jwt && application.accessTokenFormat !== 'jwt'
        ? { ...grant.accessToken, expiresIn: await this.accessTokens.shortenToJwtLifetime(grant.accessToken.id) }
        : grant.accessToken;
    const response: TokenResponse = {
      access_token: jwt
        ? await this.jwtAccessTokens.sign({
            id: accessToken.id,
            subject: grant.user ? this.subjects.of(application, grant.user.id) : application.clientId,
            clientId: application.clientId,
            scopes,
            expiresIn: accessToken.expiresIn,
            authTime: grant.authTime,
            amr: grant.amr,
            alg: application.idTokenSignedResponseAlg,
            audience: this.jwtAudience(grant.audience),
          })
        : accessToken.token,
      token_type: 'Bearer',
      expires_in: accessToken.expiresIn,
      scope: scopes.join(' '),
    };
    const { user } = grant;
    if (!user) return response;
    if (grant.rotatedRefreshToken !== undefined) response.refresh_token = grant.rotatedRefreshToken;
    else if (scopes.includes('offline_access')) {
      response.refresh_token = await this.refreshTokens.issue({
        applicationId: application.id,
        userId: user.id,
        scopes,
        authTime: grant.authTime,
        amr: grant.amr,
        accessTokenId: accessToken.id,
        resources: grant.authorizedResources ?? grant.audience,
        sessionId: grant.sessionId,
      });
    }
    if (scopes.includes('openid')) {
      const sessionId = grant.sessionId ?? undefined;
      // Only an application that listens is remembered: the others' exchanges stay one round trip.
      if (sessionId && application.backchannelLogoutUri) await this.backchannel.remember(sessionId, application.id, user.id);
      response.id_token = await this.idTokens.sign({
        sid: sessionId && this.backchannel.sidOf(sessionId),
        sub: this.subjects.of(application, user.id),
        user,
        clientId: application.clientId,
        scopes,
        authTime: grant.authTime,
        amr: grant.amr,
        nonce: grant.nonce,
        alg: application.idTokenSignedResponseAlg,
      });
    }
    return response;
  }

  /** Whether the audience names a registered resource server that takes JWT access tokens. */
  private async forJwtResourceServer(audience: readonly string[]): Promise<boolean> {
    const others = audience.filter((a) => a !== this.config.baseUrl);
    if (others.length === 0) return false;
    return (await this.resourceServers.findByIdentifiers(others)).some((s) => s.accessTokenFormat === 'jwt');
  }

  /** A JWT's `aud` (RFC 9068 §2.2): Agora's API when none was asked for, one string for one, an array for several. */
  private jwtAudience(audience: readonly string[]): string | string[] {
    if (audience.length === 0) return this.config.baseUrl;
    return audience.length === 1 ? audience[0]! : [...audience];
  }
}
