import { Module, OnModuleInit } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { AssetsController } from './assets.controller.js';
import { ErrorMappers } from '../errors/error-mappers.js';
import { ErrorsModule } from '../errors/errors.module.js';
import { WebCookies } from './cookies.js';
import { CsrfTokens } from './csrf.js';
import { answerBeforePageHandler } from './page-exception.filter.js';
import { PageRenderer } from './page-renderer.js';
import { WEB_COOKIES } from './web.tokens.js';

/** What every page needs: cookie names and flags, CSRF tokens, the page renderer, and the static assets. */
@Module({
  imports: [ErrorsModule],
  providers: [
    { provide: WEB_COOKIES, inject: [APP_CONFIG], useFactory: (config: AppConfig) => new WebCookies(config.secureCookies) },
    CsrfTokens,
    PageRenderer,
  ],
  controllers: [AssetsController],
  exports: [WEB_COOKIES, CsrfTokens, PageRenderer],
})
export class WebModule implements OnModuleInit {
  constructor(private readonly errorMappers: ErrorMappers) {}

  onModuleInit(): void {
    this.errorMappers.register(answerBeforePageHandler);
  }
}
