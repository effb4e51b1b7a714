import { Controller, Get, Inject } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import type { SignedInUser } from '../web/page-sessions.js';
import type { PageResult } from '../web/page-result.js';
import { view } from '../web/page-result.js';
import { Pages, SignedIn } from '../web/pages.decorator.js';
import { explorerPage } from './explorer.page.js';

/** GraphiQL for signed-in users, running as them (its scripts and styles are served from /assets). */
@Controller('explorer')
@Pages()
export class ExplorerController {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  @Get()
  show(@SignedIn() signedIn: SignedInUser): PageResult {
    const styleNonce = randomBytes(16).toString('base64');
    return view((c) => explorerPage({ signedIn, csrfToken: c.csrfToken, baseUrl: this.config.baseUrl, styleNonce }), {
      // What GraphiQL 3 needs beyond the strict policy, as Chromium showed (React and CodeMirror style
      // through the CSSOM, which style-src does not govern): its stylesheet, served by us, embeds its
      // fonts as data: URLs (a font cannot run script); and its dialogs (settings, shortcuts) lock
      // scrolling with a <style> element, which explorer.js has it create with this response's nonce.
      // No 'unsafe-inline': a style element injected into the page any other way is still refused.
      csp: { fontSrc: ['data:'], styleSrc: [`'nonce-${styleNonce}'`] },
    });
  }
}
