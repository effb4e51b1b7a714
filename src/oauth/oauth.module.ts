import { Inject, Module, OnModuleInit } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ErrorMappers } from '../errors/error-mappers.js';
import { addressOf } from '../errors/generic-errors.js';
import { SecurityNoticesModule } from '../security-notices/security-notices.module.js';
import { SessionsModule } from '../sessions/sessions.module.js';
import { UsersModule } from '../users/users.module.js';
import { AuthenticationRequirement } from './authorize/authentication-requirement.js';
import { AccessTokenEntity } from './tokens/access-token.entity.js';
import { AccessTokensService } from './tokens/access-tokens.service.js';
import { ApplicationEntity } from './clients/application.entity.js';
import { ApplicationsService } from './clients/applications.service.js';
import { AuthorizationCodeEntity } from './authorize/authorization-code.entity.js';
import { AuthorizationCodesService } from './authorize/authorization-codes.service.js';
import { AuthorizationRequestValidator } from './authorize/authorization-request.js';
import { AuthorizeController } from './authorize/authorize.controller.js';
import { AuthorizeEndpoint } from './authorize/authorize-endpoint.js';
import { ClientAuthenticator } from './clients/client-authentication.js';
import { ClientAssertionEntity } from './clients/client-assertion.entity.js';
import { ClientAssertionVerifier } from './clients/client-assertion.js';
import { ClientKeys } from './clients/client-keys.js';
import { RegistrationManagement } from './clients/registration-management.js';
import { DeviceAuthorizationEntity } from './device/device-authorization.entity.js';
import { DeviceAuthorizationController } from './device/device-authorization.controller.js';
import { DeviceAuthorizationsService } from './device/device-authorizations.service.js';
import { DeviceCodeGrant } from './token/grants/device-code.grant.js';
import { DeviceController } from './device/device.controller.js';
import { DeviceVerification } from './device/device-verification.js';
import { ClientCors } from './cors/client-cors.js';
import { GrantEntity } from './consent/grant.entity.js';
import { GrantsService } from './consent/grants.service.js';
import { IdTokenService } from './keys/id-token.service.js';
import { InteractionRules } from './interaction/interaction-rules.js';
import { LogoutController } from './logout/logout.controller.js';
import { LogoutEndpoint } from './logout/logout-endpoint.js';
import { LogoutRequestValidator } from './logout/logout-request.js';
import { OAUTH_CLIENT_ENDPOINTS, oauthClientErrors, REGISTRATION_ENDPOINT, registrationErrors } from './oauth-exception.filter.js';
import { ClientRegistrationService } from './clients/client-registration.service.js';
import { MetadataController } from './discovery/metadata.controller.js';
import { OidcController } from './discovery/oidc.controller.js';
import { RegistrationController } from './clients/registration.controller.js';
import { PkceService } from './pkce.service.js';
import { RefreshTokenEntity } from './tokens/refresh-token.entity.js';
import { RefreshTokenGrant } from './token/grants/refresh-token.grant.js';
import { ClientCredentialsGrant } from './token/grants/client-credentials.grant.js';
import { RefreshTokensService } from './tokens/refresh-tokens.service.js';
import { SigningKeyEntity } from './keys/signing-key.entity.js';
import { SigningKeysService } from './keys/signing-keys.service.js';
import { SigningThread } from './keys/signing-thread.js';
import { OwnJwts } from './keys/own-jwts.js';
import { JwtAccessTokens } from './tokens/jwt-access-tokens.js';
import { AuthorizationCodeGrant } from './token/grants/authorization-code.grant.js';
import { Introspection } from './token/introspection.js';
import { Revocation } from './token/revocation.js';
import { TokenEndpoint } from './token/token-endpoint.js';
import { TokenResponseBuilder } from './token/token-response.js';
import { TokenController } from './token/token.controller.js';
import { AuthModule } from '../auth/auth.module.js';
import { ErrorsModule } from '../errors/errors.module.js';
import { MetricsModule } from '../metrics/metrics.module.js';
import { RateLimitsModule } from '../rate-limits/rate-limits.module.js';
import { DatabaseModule } from '../database/database.module.js';
import { JobsModule } from '../jobs/jobs.module.js';
import { BackchannelLogout } from './logout/backchannel/backchannel-logout.js';
import { BackchannelTransport } from './logout/backchannel/backchannel-transport.js';
import { SessionIds } from './logout/backchannel/session-ids.js';
import { Subjects } from './subjects/subjects.js';
import { ResourceServersModule } from './resources/resource-servers.module.js';
import { ResourceServerAuthenticator } from './resources/resource-server-authentication.js';
import { ResourceServerDeletion } from './resources/resource-server-deletion.js';

/** The OAuth 2.0 authorization server with OpenID Connect. */
@Module({
  imports: [
    DatabaseModule,
    JobsModule,
    TypeOrmModule.forFeature([
      ApplicationEntity,
      ClientAssertionEntity,
      AccessTokenEntity,
      AuthorizationCodeEntity,
      GrantEntity,
      SigningKeyEntity,
      RefreshTokenEntity,
      DeviceAuthorizationEntity,
    ]),
    SessionsModule,
    SecurityNoticesModule,
    UsersModule,
    AuthModule,
    ErrorsModule,
    MetricsModule,
    RateLimitsModule,
    ResourceServersModule,
  ],
  providers: [
    ResourceServerAuthenticator,
    ResourceServerDeletion,
    AuthenticationRequirement,
    AuthorizationCodeGrant,
    BackchannelLogout,
    BackchannelTransport,
    SessionIds,
    Subjects,
    ApplicationsService,
    AccessTokensService,
    AuthorizationCodesService,
    AuthorizationRequestValidator,
    AuthorizeEndpoint,
    ClientAuthenticator,
    ClientAssertionVerifier,
    ClientKeys,
    RegistrationManagement,
    DeviceAuthorizationsService,
    DeviceCodeGrant,
    DeviceVerification,
    ClientCors,
    ClientRegistrationService,
    GrantsService,
    IdTokenService,
    JwtAccessTokens,
    OwnJwts,
    InteractionRules,
    Introspection,
    LogoutEndpoint,
    LogoutRequestValidator,
    PkceService,
    RefreshTokenGrant,
    ClientCredentialsGrant,
    RefreshTokensService,
    Revocation,
    SigningKeysService,
    SigningThread,
    TokenEndpoint,
    TokenResponseBuilder,
  ],
  controllers: [
    AuthorizeController,
    TokenController,
    OidcController,
    DeviceAuthorizationController,
    DeviceController,
    LogoutController,
    MetadataController,
    RegistrationController,
  ],
  exports: [
    ClientCors,
    ClientAssertionVerifier,
    ApplicationsService,
    AccessTokensService,
    AuthorizationCodesService,
    GrantsService,
    SigningKeysService,
    DeviceAuthorizationsService,
    RefreshTokensService,
    BackchannelTransport,
    ResourceServersModule,
    ResourceServerDeletion,
  ],
})
export class OAuthModule implements OnModuleInit {
  constructor(
    private readonly errorMappers: ErrorMappers,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * What Fastify refuses at a client endpoint before TokenController runs, or for a method it lacks;
   * the same at the registration endpoint, while it is on.
   */
  onModuleInit(): void {
    this.errorMappers.register((error, request, reply) => {
      const address = addressOf(request);
      if (address === REGISTRATION_ENDPOINT && this.config.oauth.dynamicRegistration) {
        registrationErrors.answer(error, request, reply);
        return true;
      }
      // RFC 7592: a client's registration, read, replaced or deleted.
      if (address.startsWith(`${REGISTRATION_ENDPOINT}/`)) {
        registrationErrors.answer(error, request, reply);
        return true;
      }
      if (!OAUTH_CLIENT_ENDPOINTS.has(address)) return false;
      oauthClientErrors.answer(error, request, reply);
      return true;
    });
  }
}
