import { Body, Controller, Get, Post, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { SignedInUser } from '../../web/page-sessions.js';
import type { PageResult } from '../../web/page-result.js';
import { AnonymousPage, CrossSiteForm, CurrentSession, Pages } from '../../web/pages.decorator.js';
import { LogoutEndpoint } from './logout-endpoint.js';

/**
 * OpenID Connect RP-Initiated Logout 1.0: the end-session endpoint (LogoutEndpoint has the steps). A
 * relying party sends the browser here (GET, or a form POST) to end the user's Agora session.
 */
@Controller('oauth/logout')
@Pages()
@AnonymousPage()
export class LogoutController {
  constructor(private readonly endpoint: LogoutEndpoint) {}

  @Get()
  logout(@Req() req: FastifyRequest, @CurrentSession() signedIn: SignedInUser | null): Promise<PageResult> {
    const params = new URLSearchParams(req.url.includes('?') ? req.url.slice(req.url.indexOf('?') + 1) : '');
    return this.endpoint.logout(req, signedIn, params);
  }

  /** The same request as a form post from the relying party's page: checked, then handed on to the GET. */
  @Post()
  @CrossSiteForm()
  logoutForm(@Body() body: unknown): Promise<PageResult> {
    return this.endpoint.forward(formParameters(body));
  }

  /** The confirmation page's form (CSRF-checked like every form of ours). */
  @Post('confirm')
  confirm(@Req() req: FastifyRequest, @Body() body: unknown): Promise<PageResult> {
    return this.endpoint.confirm(req, formParameters(body));
  }
}

/** A posted form as parameters (a field given twice stays twice, for the validator to refuse); null if a value is not text. */
function formParameters(body: unknown): URLSearchParams | null {
  const params = new URLSearchParams();
  if (body === undefined || body === null) return params;
  if (typeof body !== 'object' || Array.isArray(body)) return null;
  for (const [name, value] of Object.entries(body as Record<string, unknown>)) {
    for (const v of Array.isArray(value) ? value : [value]) {
      if (typeof v !== 'string') return null;
      params.append(name, v);
    }
  }
  return params;
}
