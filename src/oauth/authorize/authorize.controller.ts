import { Body, Controller, Get, Post, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { SignedInUser } from '../../web/page-sessions.js';
import type { PageResult } from '../../web/page-result.js';
import { AnonymousPage, CrossSiteFormUnless, CurrentSession, Pages } from '../../web/pages.decorator.js';
import { AuthorizeEndpoint } from './authorize-endpoint.js';

/**
 * `/oauth/authorize` (AuthorizeEndpoint has the steps). A page open to anyone: a visitor who is not
 * signed in is sent to sign in (or, with prompt=none, back to the client with login_required).
 */
@Controller('oauth/authorize')
@Pages()
@AnonymousPage()
export class AuthorizeController {
  constructor(private readonly endpoint: AuthorizeEndpoint) {}

  @Get()
  authorize(@Req() req: FastifyRequest, @CurrentSession() session: SignedInUser | null): Promise<PageResult> {
    const params = new URLSearchParams(req.url.includes('?') ? req.url.slice(req.url.indexOf('?') + 1) : '');
    return this.endpoint.authorize(session, params);
  }

  /**
   * Two forms share the address. The consent form (with `_csrf` and `decision`, CSRF-checked by
   * PageGuard): the request's parameters posted back, with the user's decision. Any other post is an
   * authorization request sent as a form (OpenID Connect Core §3.1.2.1), from the client's site: it
   * changes nothing and is answered with a 303 to the same request as a GET, which the browser makes
   * with the session cookie a cross-site post does not carry.
   */
  @Post()
  @CrossSiteFormUnless('_csrf', 'decision')
  decide(@CurrentSession() session: SignedInUser | null, @Body() body: unknown): Promise<PageResult> {
    const fields = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(fields)) {
      if (name === '_csrf' || name === 'decision') continue;
      for (const v of Array.isArray(value) ? value : [value]) if (typeof v === 'string') params.append(name, v);
    }
    if (!('_csrf' in fields) && !('decision' in fields)) return Promise.resolve(this.endpoint.forward(params));
    return this.endpoint.decide(session, params, fields.decision);
  }
}
