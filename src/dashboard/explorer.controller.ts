import { Controller, Get, Inject } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import type { SignedInUser } from '../sessions/sessions.service.js';
import type { PageResult } from '../web/page-result.js';
import { view } from '../web/page-result.js';
import { Pages, SignedIn } from '../web/pages.decorator.js';
import { explorerPage } from './explorer.page.js';

/** The offline GraphQL explorer for signed-in users (its script and styles are served from /assets). */
@Controller('explorer')
@Pages()
export class ExplorerController {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  @Get()
  show(@SignedIn() signedIn: SignedInUser): PageResult {
    return view((c) => explorerPage({ signedIn, csrfToken: c.csrfToken, baseUrl: this.config.baseUrl }));
  }
}
