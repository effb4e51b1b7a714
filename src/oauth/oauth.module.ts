import { Inject, Module, OnModuleInit } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ErrorMappers } from '../errors/error-mappers.js';
import { addressOf } from '../errors/generic-errors.js';
import { SecurityNoticesModule } from '../security-notices/security-notices.module.js';
import { SessionsModule } from '../sessions/sessions.module.js';
import { UsersModule } from '../users/users.module.js';
import { AuthenticationRequirement } from './authentication-requirement.js';
import { AccessTokenEntity } from './access-token.entity.js';
import { AccessTokensService } from './access-tokens.service.js';
import { ApplicationEntity } from './application.entity.js';
import { ApplicationsService } from './applications.service.js';
import { AuthorizationCodeEntity } from './authorization-code.entity.js';
import { AuthorizationCodesService } from './authorization-codes.service.js';
import { AuthorizationRequestValidator } from './authorization-request.js';
import { AuthorizeController } from './authorize.controller.js';
import { ClientAuthenticator } from './client-authentication.js';
import { DeviceAuthorizationEntity } from './device-authorization.entity.js';
import { DeviceAuthorizationController } from './device-authorization.controller.js';
import { DeviceAuthorizationsService } from './device-authorizations.service.js';
import { DeviceCodeGrant } from './device-code-grant.js';
import { DeviceController } from './device.controller.js';
import { ClientCors } from './cors/client-cors.js';
import { GrantEntity } from './grant.entity.js';
import { GrantsService } from './grants.service.js';
import { IdTokenService } from './id-token.service.js';
import { LogoutController } from './logout.controller.js';
import { LogoutRequestValidator } from './logout-request.js';
import { OAUTH_CLIENT_ENDPOINTS, oauthClientErrors, REGISTRATION_ENDPOINT, registrationErrors } from './oauth-exception.filter.js';
import { ClientRegistrationService } from './client-registration.service.js';
import { MetadataController } from './metadata.controller.js';
import { OidcController } from './oidc.controller.js';
import { RegistrationController } from './registration.controller.js';
import { PkceService } from './pkce.service.js';
import { RefreshTokenEntity } from './refresh-token.entity.js';
import { RefreshTokenGrant } from './refresh-token.grant.js';
import { RefreshTokensService } from './refresh-tokens.service.js';
import { SigningKeyEntity } from './signing-key.entity.js';
import { SigningKeysService } from './signing-keys.service.js';
import { SigningThread } from './signing-thread.js';
import { TokenExchangeService } from './token-exchange.service.js';
import { TokenController } from './token.controller.js';

/** The OAuth 2.0 authorization server with OpenID Connect. */
@Module({
  imports: [
    TypeOrmModule.forFeature([
      ApplicationEntity,
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
  ],
  providers: [
    AuthenticationRequirement,
    ApplicationsService,
    AccessTokensService,
    AuthorizationCodesService,
    AuthorizationRequestValidator,
    ClientAuthenticator,
    DeviceAuthorizationsService,
    DeviceCodeGrant,
    ClientCors,
    ClientRegistrationService,
    GrantsService,
    IdTokenService,
    LogoutRequestValidator,
    PkceService,
    RefreshTokenGrant,
    RefreshTokensService,
    SigningKeysService,
    SigningThread,
    TokenExchangeService,
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
    ApplicationsService,
    AccessTokensService,
    AuthorizationCodesService,
    GrantsService,
    SigningKeysService,
    DeviceAuthorizationsService,
    RefreshTokensService,
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
      if (!OAUTH_CLIENT_ENDPOINTS.has(address)) return false;
      oauthClientErrors.answer(error, request, reply);
      return true;
    });
  }
}
