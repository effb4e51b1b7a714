import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG } from '../../config/config.module.js';
import type { AppConfig } from '../../config/config.schema.js';
import type { ApplicationEntity } from '../clients/application.entity.js';
import type { TokenRequestParams } from '../clients/client-authentication.js';
import { OAuthError } from '../oauth.errors.js';
import { AccessTokensService, type ActiveToken } from '../tokens/access-tokens.service.js';
import { JWT_PREFIX } from '../tokens/jwt-access-tokens.js';
import { RefreshTokensService } from '../tokens/refresh-tokens.service.js';
import { Subjects } from '../subjects/subjects.js';
import { ApplicationsService } from '../clients/applications.service.js';
import type { ResourceServer } from '../resources/resource-server.model.js';

/** A live token, as introspection describes it. */
interface ActiveTokenFacts {
  tokenType: 'Bearer' | 'refresh_token';
  clientId: string;
  scopes: Iterable<string>;
  /** Null for a service account's token: its subject is the client itself (no username). */
  user: { id: string; username: string } | null;
  issuedAt: Date;
  expiresAt: Date;
  /**
   * The access token's `aud`: its audience when it names resource servers (RFC 8707), Agora's API for a
   * JWT for it alone; otherwise (opaque, for Agora alone) the client id is answered, as before.
   */
  audience?: string | string[];
}

/**
 * Token introspection (RFC 7662) for the authenticated client: a refresh token or an access token of its
 * own (opaque, or a JWT access token: its signature checked, then its row) is described; anything else, another client's token included, is `{ active: false }`.
 */
@Injectable()
export class Introspection {
  constructor(
    private readonly refreshTokens: RefreshTokensService,
    private readonly accessTokens: AccessTokensService,
    private readonly subjects: Subjects,
    private readonly applications: ApplicationsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async introspect(application: ApplicationEntity, params: TokenRequestParams): Promise<Record<string, unknown>> {
    if (!params.token) throw new OAuthError('invalid_request', 'token is required');
    const refresh = await this.refreshTokens.findActive(params.token, application.id);
    // Not to a pairwise client: a username is the same for every client, which pairwise subjects exist to prevent.
    const disclose = { username: application.subjectType !== 'pairwise' };
    if (refresh) return this.describe(application, { tokenType: 'refresh_token', ...refresh }, disclose);
    const active = await this.accessTokens.findActive(params.token);
    // A client learns only about its own tokens.
    if (!active || active.principal.credential.clientId !== application.clientId) return { active: false };
    return this.describe(application, this.accessTokenFacts(application, active, params.token.startsWith(JWT_PREFIX)), disclose);
  }

  /**
   * For a resource server (RFC 8707) authenticated with its own credential: a live access token whose
   * audience includes its identifier is described, with the `sub` its client sees; anything else
   * (another audience, a refresh token, a revoked or expired token) is `{ active: false }`.
   */
  async introspectForResourceServer(server: ResourceServer, params: TokenRequestParams): Promise<Record<string, unknown>> {
    if (!params.token) throw new OAuthError('invalid_request', 'token is required');
    const active = await this.accessTokens.findActive(params.token);
    if (!active || !active.audience.includes(server.identifier)) return { active: false };
    const clientId = active.principal.credential.clientId;
    const application = clientId === undefined ? null : await this.applications.findClient(clientId);
    if (!application) return { active: false };
    // A resource server learns the subject its client sees, never the username; `aud` as its JWT would carry it.
    return this.describe(application, this.accessTokenFacts(application, active, true), { username: false });
  }

  /** What introspection says of a live access token of `application`'s. */
  private accessTokenFacts(application: ApplicationEntity, active: ActiveToken, jwt: boolean): ActiveTokenFacts {
    const { principal } = active;
    return {
      tokenType: 'Bearer',
      clientId: application.clientId,
      scopes: principal.scopes,
      user: principal.user,
      issuedAt: active.issuedAt,
      expiresAt: active.expiresAt,
      audience: this.audienceOf(active.audience, jwt),
    };
  }

  /** `aud` as a JWT would carry it: one string, or an array for several; for a token of Agora's alone, Agora's (JWT) or none. */
  private audienceOf(audience: readonly string[], jwt: boolean): string | string[] | undefined {
    if (audience.length === 0 || (audience.length === 1 && audience[0] === this.config.baseUrl))
      return jwt ? this.config.baseUrl : undefined;
    return audience.length === 1 ? audience[0]! : [...audience];
  }

  /**
   * The response for a live token (RFC 7662 §2.2), the same for both kinds and both readers (its client, a
   * resource server); `sub` is the one `application`'s client sees.
   */
  private describe(application: ApplicationEntity, token: ActiveTokenFacts, disclose: { username: boolean }): Record<string, unknown> {
    return {
      active: true,
      scope: [...token.scopes].join(' '),
      client_id: token.clientId,
      ...(token.user && disclose.username ? { username: token.user.username } : {}),
      token_type: token.tokenType,
      exp: Math.floor(token.expiresAt.getTime() / 1000),
      iat: Math.floor(token.issuedAt.getTime() / 1000),
      // A service account's token acts for no person: its subject is the client (RFC 9068 §2.2); a
      // pairwise client's user is the subject it knows (OpenID Connect Core §8.1).
      sub: token.user ? this.subjects.of(application, token.user.id) : token.clientId,
      aud: token.audience ?? token.clientId,
      iss: this.config.baseUrl,
    };
  }
}
