import { Body, Controller, Get, Param, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { OwnAuthentication, Public } from '../auth/public.decorator.js';
import { PersonalTokenError } from '../personal-tokens/personal-tokens.errors.js';
import { PersonalTokensService } from '../personal-tokens/personal-tokens.service.js';
import type { SignedInUser } from '../sessions/sessions.service.js';
import { WebSession } from '../sessions/web-session.js';
import { UserError } from '../users/users.errors.js';
import { UsersService } from '../users/users.service.js';
import { formList } from '../web/form-values.js';
import { sendPage } from '../web/security-headers.js';
import { AccountPageOptions, accountPage, confirmRevokePage } from './account.pages.js';

/** The account page: profile (display name) and personal access tokens (create, shown once; revoke with confirmation). */
@Controller('account')
@Public()
@OwnAuthentication()
export class AccountController {
  constructor(
    private readonly session: WebSession,
    private readonly tokens: PersonalTokensService,
    private readonly users: UsersService,
  ) {}

  @Get()
  async show(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<FastifyReply> {
    const signedIn = await this.session.requireUser(req, reply);
    if (!signedIn) return reply;
    return this.render(req, reply, signedIn, {});
  }

  @Post('profile')
  async updateProfile(
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
    @Body() body: Record<string, unknown>,
  ): Promise<FastifyReply> {
    const signedIn = await this.session.requireUser(req, reply);
    if (!signedIn || !this.session.acceptForm(req, reply)) return reply;
    const name = typeof body.name === 'string' ? body.name : '';
    try {
      const user = await this.users.updateProfile(signedIn.user.id, { name });
      return this.render(req, reply, { ...signedIn, user: { ...signedIn.user, name: user.name } }, { profileSaved: true });
    } catch (err) {
      if (!(err instanceof UserError) || err.field !== 'name') throw err;
      return this.render(req, reply, signedIn, { profile: { name, error: err.message } }, 422);
    }
  }

  @Post('tokens')
  async create(@Req() req: FastifyRequest, @Res() reply: FastifyReply, @Body() body: Record<string, unknown>): Promise<FastifyReply> {
    const signedIn = await this.session.requireUser(req, reply);
    if (!signedIn || !this.session.acceptForm(req, reply)) return reply;
    const name = typeof body.name === 'string' ? body.name : '';
    const scopes = formList(body.scopes);
    const expires = typeof body.expires_at === 'string' && body.expires_at ? body.expires_at : undefined;
    try {
      const expiresAt = expires ? new Date(`${expires}T23:59:59.999Z`) : null;
      const { token, personalToken } = await this.tokens.create(signedIn.user.id, { name, scopes, expiresAt });
      return this.render(req, reply, signedIn, { created: { name: personalToken.name, token } }, 201);
    } catch (err) {
      if (!(err instanceof PersonalTokenError) || !err.field) throw err;
      return this.render(req, reply, signedIn, { errors: { [err.field]: err.message }, values: { name, scopes, expiresAt: expires } }, 422);
    }
  }

  @Get('tokens/:id/revoke')
  async confirmRevoke(@Req() req: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string): Promise<FastifyReply> {
    const signedIn = await this.session.requireUser(req, reply);
    if (!signedIn) return reply;
    const token = (await this.tokens.listForUser(signedIn.user.id)).find((t) => t.id === id && !t.revokedAt);
    if (!token) return reply.redirect('/account#tokens', 303);
    return sendPage(reply, confirmRevokePage({ signedIn, csrfToken: this.session.csrfToken(req, reply), token }));
  }

  @Post('tokens/:id/revoke')
  async revoke(@Req() req: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string): Promise<FastifyReply> {
    const signedIn = await this.session.requireUser(req, reply);
    if (!signedIn || !this.session.acceptForm(req, reply)) return reply;
    try {
      const token = await this.tokens.revoke(id, signedIn.user.id);
      return this.render(req, reply, signedIn, { revoked: token.name });
    } catch (err) {
      if (err instanceof PersonalTokenError && err.code === 'TOKEN_NOT_FOUND') return reply.redirect('/account#tokens', 303);
      throw err;
    }
  }

  private async render(
    req: FastifyRequest,
    reply: FastifyReply,
    signedIn: SignedInUser,
    extra: Partial<AccountPageOptions>,
    status = 200,
  ): Promise<FastifyReply> {
    const tokens = await this.tokens.listForUser(signedIn.user.id);
    return sendPage(reply, accountPage({ signedIn, csrfToken: this.session.csrfToken(req, reply), tokens, ...extra }), { status });
  }
}
