import { Body, Controller, Get, Inject, Param, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { OwnAuthentication, Public } from '../auth/public.decorator.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { ApplicationError } from '../oauth/applications.errors.js';
import { ApplicationsService } from '../oauth/applications.service.js';
import { GrantsService } from '../oauth/grants.service.js';
import { WebSession } from '../sessions/web-session.js';
import { formList } from '../web/form-values.js';
import { sendPage } from '../web/security-headers.js';
import { applicationPage, applicationsPage, authorizedPage, confirmDeletePage } from './applications.pages.js';

/** Applications a user develops, and applications a user has authorized. */
@Controller()
@Public()
@OwnAuthentication()
export class ApplicationsController {
  constructor(
    private readonly session: WebSession,
    private readonly applications: ApplicationsService,
    private readonly grants: GrantsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get('applications')
  async index(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<FastifyReply> {
    const signedIn = await this.session.requireUser(req, reply);
    if (!signedIn) return reply;
    const applications = await this.applications.listForOwner(signedIn.user.id);
    return sendPage(reply, applicationsPage({ signedIn, csrfToken: this.session.csrfToken(req, reply), applications }));
  }

  @Post('applications')
  async create(@Req() req: FastifyRequest, @Res() reply: FastifyReply, @Body() body: Record<string, unknown>): Promise<FastifyReply> {
    const signedIn = await this.session.requireUser(req, reply);
    if (!signedIn || !this.session.acceptForm(req, reply)) return reply;
    const name = typeof body.name === 'string' ? body.name : '';
    const redirectUris = typeof body.redirect_uris === 'string' ? body.redirect_uris : '';
    const scopes = formList(body.scopes);
    const csrfToken = this.session.csrfToken(req, reply);
    try {
      const { application, clientSecret } = await this.applications.create(signedIn.user.id, {
        name,
        redirectUris: redirectUris.split(/\r?\n/),
        scopes,
      });
      return sendPage(reply, applicationPage({ signedIn, csrfToken, application, baseUrl: this.config.baseUrl, secret: clientSecret }), {
        status: 201,
      });
    } catch (err) {
      if (!(err instanceof ApplicationError) || !err.field) throw err;
      const applications = await this.applications.listForOwner(signedIn.user.id);
      const form = applicationsPage({
        signedIn,
        csrfToken,
        applications,
        errors: { [err.field]: err.message },
        values: { name, redirectUris, scopes },
      });
      return sendPage(reply, form, { status: 422 });
    }
  }

  @Get('applications/:id')
  async show(@Req() req: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string): Promise<FastifyReply> {
    const signedIn = await this.session.requireUser(req, reply);
    if (!signedIn) return reply;
    return this.ownApplication(reply, id, signedIn.user.id, async (application) =>
      sendPage(
        reply,
        applicationPage({ signedIn, csrfToken: this.session.csrfToken(req, reply), application, baseUrl: this.config.baseUrl }),
      ),
    );
  }

  @Post('applications/:id')
  async update(
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
    @Param('id') id: string,
    @Body() body: Record<string, unknown>,
  ): Promise<FastifyReply> {
    const signedIn = await this.session.requireUser(req, reply);
    if (!signedIn || !this.session.acceptForm(req, reply)) return reply;
    return this.ownApplication(reply, id, signedIn.user.id, async (current) => {
      const csrfToken = this.session.csrfToken(req, reply);
      const input = {
        name: typeof body.name === 'string' ? body.name : '',
        redirectUris: (typeof body.redirect_uris === 'string' ? body.redirect_uris : '').split(/\r?\n/),
        scopes: formList(body.scopes),
      };
      try {
        const application = await this.applications.update(id, signedIn.user.id, input);
        return sendPage(reply, applicationPage({ signedIn, csrfToken, application, baseUrl: this.config.baseUrl, saved: true }));
      } catch (err) {
        if (!(err instanceof ApplicationError) || !err.field) throw err;
        const form = applicationPage({
          signedIn,
          csrfToken,
          application: current,
          baseUrl: this.config.baseUrl,
          errors: { [err.field]: err.message },
        });
        return sendPage(reply, form, { status: 422 });
      }
    });
  }

  @Post('applications/:id/secret')
  async regenerate(@Req() req: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string): Promise<FastifyReply> {
    const signedIn = await this.session.requireUser(req, reply);
    if (!signedIn || !this.session.acceptForm(req, reply)) return reply;
    return this.ownApplication(reply, id, signedIn.user.id, async () => {
      const { application, clientSecret } = await this.applications.rotateSecret(id, signedIn.user.id);
      const csrfToken = this.session.csrfToken(req, reply);
      return sendPage(reply, applicationPage({ signedIn, csrfToken, application, baseUrl: this.config.baseUrl, secret: clientSecret }));
    });
  }

  @Get('applications/:id/delete')
  async confirmDelete(@Req() req: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string): Promise<FastifyReply> {
    const signedIn = await this.session.requireUser(req, reply);
    if (!signedIn) return reply;
    return this.ownApplication(reply, id, signedIn.user.id, async (application) =>
      sendPage(reply, confirmDeletePage({ signedIn, csrfToken: this.session.csrfToken(req, reply), application })),
    );
  }

  @Post('applications/:id/delete')
  async remove(@Req() req: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string): Promise<FastifyReply> {
    const signedIn = await this.session.requireUser(req, reply);
    if (!signedIn || !this.session.acceptForm(req, reply)) return reply;
    return this.ownApplication(reply, id, signedIn.user.id, async () => {
      await this.applications.delete(id, signedIn.user.id);
      return reply.redirect('/applications', 303);
    });
  }

  @Get('account/authorized')
  async authorized(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<FastifyReply> {
    const signedIn = await this.session.requireUser(req, reply);
    if (!signedIn) return reply;
    const grants = await this.grants.listForUser(signedIn.user.id);
    return sendPage(reply, authorizedPage({ signedIn, csrfToken: this.session.csrfToken(req, reply), grants }));
  }

  @Post('account/authorized/:applicationId/revoke')
  async revokeAccess(
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
    @Param('applicationId') applicationId: string,
  ): Promise<FastifyReply> {
    const signedIn = await this.session.requireUser(req, reply);
    if (!signedIn || !this.session.acceptForm(req, reply)) return reply;
    const grant = (await this.grants.listForUser(signedIn.user.id)).find((g) => g.applicationId === applicationId);
    if (grant) await this.grants.revoke(signedIn.user.id, applicationId);
    const grants = await this.grants.listForUser(signedIn.user.id);
    return sendPage(reply, authorizedPage({ signedIn, csrfToken: this.session.csrfToken(req, reply), grants, revoked: grant?.name }));
  }

  /** Runs `next` for an application the user owns; for anything else, back to the list (never another user's data). */
  private async ownApplication(
    reply: FastifyReply,
    id: string,
    ownerId: string,
    next: (application: Awaited<ReturnType<ApplicationsService['get']>>) => Promise<FastifyReply>,
  ): Promise<FastifyReply> {
    let application;
    try {
      application = await this.applications.get(id, ownerId);
    } catch (err) {
      if (err instanceof ApplicationError && err.code === 'APPLICATION_NOT_FOUND') return reply.redirect('/applications', 303);
      throw err;
    }
    return next(application);
  }
}
