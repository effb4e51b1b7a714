import { Body, Controller, Get, Post, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { DomainError } from '../errors/domain-error.js';
import { SessionsService } from '../sessions/sessions.service.js';
import type { SignedInUser } from '../sessions/sessions.service.js';
import { WebSession } from '../sessions/web-session.js';
import { UsersService } from '../users/users.service.js';
import { fieldErrors } from '../web/form-values.js';
import type { PageResult } from '../web/page-result.js';
import { Redirect, seeOther, view } from '../web/page-result.js';
import { Pages, SignedIn } from '../web/pages.decorator.js';
import { confirmSignOutEverywherePage, SecurityPageOptions, securityPage } from './security.pages.js';

const text = (value: unknown): string => (typeof value === 'string' ? value : '');
const isInvalid = (err: unknown): err is DomainError => err instanceof DomainError && err.kind !== 'forbidden' && err.kind !== 'not_found';

/** The security page: change password (other sessions end), change e-mail, active sessions and signing out everywhere. */
@Controller('account')
@Pages()
export class SecurityController {
  constructor(
    private readonly users: UsersService,
    private readonly sessions: SessionsService,
    private readonly session: WebSession,
  ) {}

  @Get('security')
  show(@SignedIn() signedIn: SignedInUser): Promise<PageResult> {
    return this.securityView(signedIn, {});
  }

  @Post('password')
  async changePassword(@SignedIn() signedIn: SignedInUser, @Body() body: Record<string, unknown>): Promise<PageResult> {
    try {
      await this.users.changePassword(signedIn.user.id, {
        currentPassword: text(body.current_password),
        newPassword: text(body.new_password),
      });
    } catch (err) {
      if (!isInvalid(err)) throw err;
      return this.securityView(signedIn, { passwordErrors: fieldErrors(err) }, 422);
    }
    const ended = await this.sessions.endAllFor(signedIn.user.id, signedIn.sessionId);
    const others = ended === 0 ? '' : ` ${ended === 1 ? 'Your other session was' : `Your ${ended} other sessions were`} signed out.`;
    return seeOther('/account/security', { path: '/account/security', notice: `Password changed.${others}` });
  }

  @Post('email')
  async changeEmail(@SignedIn() signedIn: SignedInUser, @Body() body: Record<string, unknown>): Promise<PageResult> {
    const email = text(body.email);
    try {
      const user = await this.users.changeEmail(signedIn.user.id, { currentPassword: text(body.current_password), email });
      return seeOther('/account/security', { path: '/account/security', notice: `E-mail address changed to ${user.email}.` });
    } catch (err) {
      if (!isInvalid(err)) throw err;
      return this.securityView(signedIn, { emailErrors: fieldErrors(err), email }, 422);
    }
  }

  @Get('sessions/sign-out-everywhere')
  async confirmSignOutEverywhere(@SignedIn() signedIn: SignedInUser): Promise<PageResult> {
    const count = (await this.sessions.listForUser(signedIn.user.id)).length;
    return view((c) => confirmSignOutEverywherePage({ signedIn, csrfToken: c.csrfToken, count }));
  }

  @Post('sessions/sign-out-everywhere')
  async signOutEverywhere(@SignedIn() signedIn: SignedInUser, @Req() req: FastifyRequest): Promise<PageResult> {
    await this.sessions.endAllFor(signedIn.user.id);
    return new Redirect('/sign-in', 303, { cookies: await this.session.signOut(req) });
  }

  private async securityView(signedIn: SignedInUser, extra: Partial<SecurityPageOptions>, status = 200): Promise<PageResult> {
    const sessions = await this.sessions.listForUser(signedIn.user.id);
    return view((c) => securityPage({ signedIn, csrfToken: c.csrfToken, sessions, notice: c.flash?.notice, ...extra }), { status });
  }
}
