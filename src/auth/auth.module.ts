import { Module, OnModuleInit } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { PassportModule } from '@nestjs/passport';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { DATABASE_TARGET } from '../database/database.module.js';
import type { DatabaseTarget } from '../database/database-target.js';
import { ErrorMappers } from '../errors/error-mappers.js';
import { AuthError, sendAuthError } from './auth.errors.js';
import { AuthGuard } from './auth.guard.js';
import { CredentialCache } from './credential-cache.js';
import { CredentialChangeListener } from './credential-change.listener.js';
import { CredentialVerifier } from './credential-verifier.js';
import { RequestAuthenticator } from './request-authenticator.js';
import { BearerStrategy } from './strategies/bearer.strategy.js';
import { PrivateTokenStrategy } from './strategies/private-token.strategy.js';
import { ErrorsModule } from '../errors/errors.module.js';
import { MetricsModule } from '../metrics/metrics.module.js';
import { RateLimitsModule } from '../rate-limits/rate-limits.module.js';
import { DatabaseModule } from '../database/database.module.js';

/** API authentication: the global guard, its strategies and the registry of token verifiers. */
@Module({
  imports: [DatabaseModule, PassportModule, ErrorsModule, MetricsModule, RateLimitsModule],
  providers: [
    {
      provide: CredentialCache,
      inject: [APP_CONFIG, DATABASE_TARGET],
      // Only where every change is heard: a PostgreSQL server's notifications, or the embedded database
      // this process holds. The CLI caches nothing through a running server's socket; when it opens the
      // embedded database itself (no server running) it holds it and caches like a server, harmlessly.
      useFactory: (config: AppConfig, target: DatabaseTarget) =>
        new CredentialCache(target.kind === 'server' || target.notifications ? config.auth.cacheTtlMs : 0),
    },
    CredentialChangeListener,
    CredentialVerifier,
    RequestAuthenticator,
    BearerStrategy,
    PrivateTokenStrategy,
    { provide: APP_GUARD, useClass: AuthGuard },
  ],
  exports: [CredentialVerifier, RequestAuthenticator, CredentialChangeListener],
})
export class AuthModule implements OnModuleInit {
  constructor(private readonly errorMappers: ErrorMappers) {}

  /** AuthGuard runs on every route: its 401/403 are answered the same on routes without a filter of their own. */
  onModuleInit(): void {
    this.errorMappers.register((error, _request, reply) => {
      if (!(error instanceof AuthError)) return false;
      sendAuthError(reply, error);
      return true;
    });
  }
}
