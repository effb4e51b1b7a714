import { Global, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { PassportModule } from '@nestjs/passport';
import { AuthGuard } from './auth.guard.js';
import { CredentialVerifier } from './credential-verifier.js';
import { RequestAuthenticator } from './request-authenticator.js';
import { BearerStrategy } from './strategies/bearer.strategy.js';
import { PrivateTokenStrategy } from './strategies/private-token.strategy.js';

/** API authentication: the global guard, its strategies and the registry of token verifiers. */
@Global()
@Module({
  imports: [PassportModule],
  providers: [CredentialVerifier, RequestAuthenticator, BearerStrategy, PrivateTokenStrategy, { provide: APP_GUARD, useClass: AuthGuard }],
  exports: [CredentialVerifier, RequestAuthenticator],
})
export class AuthModule {}
