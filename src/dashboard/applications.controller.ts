import { Body, Controller, Get, Inject, Param, Post } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { DomainError } from '../errors/domain-error.js';
import { CLIENT_TYPES, type ClientType } from '../oauth/application.model.js';
import { ApplicationError } from '../oauth/applications.errors.js';
import { ApplicationsService } from '../oauth/applications.service.js';
import { GrantsService } from '../oauth/grants.service.js';
import type { SignedInUser } from '../sessions/sessions.service.js';
import { UsersService } from '../users/users.service.js';
import { fieldErrors, formList, formText } from '../web/form-values.js';
import type { PageResult } from '../web/page-result.js';
import { seeOther, view } from '../web/page-result.js';
import { Pages, SignedIn } from '../web/pages.decorator.js';
import {
  ApplicationFormValues,
  applicationPage,
  applicationsPage,
  authorizedPage,
  confirmDeletePage,
  confirmRegeneratePage,
  confirmRevokeAccessPage,
} from './applications.pages.js';

function applicationInput(body: Record<string, unknown>) {
  return {
    name: formText(body.name),
    redirectUris: formText(body.redirect_uris).split(/\r?\n/),
    postLogoutRedirectUris: formText(body.post_logout_redirect_uris).split(/\r?\n/),
    scopes: formList(body.scopes),
  };
}

/** What was typed, to show the form again with its errors. */
function formValues(body: Record<string, unknown>, scopes: string[]): ApplicationFormValues {
  return {
    name: formText(body.name),
    redirectUris: formText(body.redirect_uris),
    postLogoutRedirectUris: formText(body.post_logout_redirect_uris),
    scopes,
  };
}

/** The type chosen on the registration form; a form without one registers a confidential client, as before. */
function clientTypeOf(body: Record<string, unknown>): ClientType | undefined {
  const value = body.client_type === undefined ? 'confidential' : formText(body.client_type);
  return (CLIENT_TYPES as readonly string[]).includes(value) ? (value as ClientType) : undefined;
}

function isInvalidInput(err: unknown): err is DomainError {
  return err instanceof DomainError && err.kind === 'invalid';
}

/**
 * Applications a user develops, and applications a user has authorized. Another user's application,
 * or an unknown id, is a 404 page (the service's APPLICATION_NOT_FOUND), never someone else's data.
 */
@Controller()
@Pages()
export class ApplicationsController {
  constructor(
    private readonly applications: ApplicationsService,
    private readonly grants: GrantsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly users: UsersService,
  ) {}

  @Get('applications')
  async index(@SignedIn() signedIn: SignedInUser): Promise<PageResult> {
    const applications = await this.applications.listForOwner(signedIn.user.id);
    return view((c) => applicationsPage({ signedIn, csrfToken: c.csrfToken, applications, notice: c.flash?.notice }));
  }

  @Post('applications')
  async create(@SignedIn() signedIn: SignedInUser, @Body() body: Record<string, unknown>): Promise<PageResult> {
    const input = applicationInput(body);
    const clientType = clientTypeOf(body);
    // Here rather than in ApplicationsService (src/oauth/ is another helper's this round): the operator's
    // apps:create and dynamic registration are not a user's own doing.
    await this.users.requireVerifiedEmail(signedIn.user.id);
    try {
      if (!clientType) throw new ApplicationError('INVALID_CLIENT_TYPE', 'Choose confidential or public', 'clientType');
      const { application, clientSecret } = await this.applications.create(signedIn.user.id, input, clientType);
      const path = `/applications/${application.id}`;
      return seeOther(path, {
        path,
        notice: 'Application registered.',
        ...(clientSecret === undefined ? {} : { secret: { label: 'Application Secret', value: clientSecret } }),
      });
    } catch (err) {
      if (!isInvalidInput(err)) throw err;
      const applications = await this.applications.listForOwner(signedIn.user.id);
      const values = { ...formValues(body, input.scopes), clientType: formText(body.client_type) };
      return view((c) => applicationsPage({ signedIn, csrfToken: c.csrfToken, applications, errors: fieldErrors(err), values }), {
        status: 422,
      });
    }
  }

  @Get('applications/:id')
  async show(@SignedIn() signedIn: SignedInUser, @Param('id') id: string): Promise<PageResult> {
    const application = await this.applications.get(id, signedIn.user.id);
    return view((c) =>
      applicationPage({
        signedIn,
        csrfToken: c.csrfToken,
        application,
        baseUrl: this.config.baseUrl,
        secret: c.flash?.secret?.value,
        notice: c.flash?.notice,
      }),
    );
  }

  @Post('applications/:id')
  async update(@SignedIn() signedIn: SignedInUser, @Param('id') id: string, @Body() body: Record<string, unknown>): Promise<PageResult> {
    const current = await this.applications.get(id, signedIn.user.id);
    const input = applicationInput(body);
    try {
      await this.applications.update(id, signedIn.user.id, input);
      return seeOther(`/applications/${id}`, { path: `/applications/${id}`, notice: 'Saved.' });
    } catch (err) {
      if (!isInvalidInput(err)) throw err;
      const values = formValues(body, input.scopes);
      return view(
        (c) =>
          applicationPage({
            signedIn,
            csrfToken: c.csrfToken,
            application: current,
            baseUrl: this.config.baseUrl,
            errors: fieldErrors(err),
            values,
          }),
        { status: 422 },
      );
    }
  }

  @Get('applications/:id/secret')
  async confirmRegenerate(@SignedIn() signedIn: SignedInUser, @Param('id') id: string): Promise<PageResult> {
    const application = await this.applications.get(id, signedIn.user.id);
    if (application.clientType === 'public')
      throw new ApplicationError('PUBLIC_CLIENT', 'A public client has no secret to rotate: it proves itself with PKCE alone', 'id');
    return view((c) => confirmRegeneratePage({ signedIn, csrfToken: c.csrfToken, application }));
  }

  @Post('applications/:id/secret')
  async regenerate(@SignedIn() signedIn: SignedInUser, @Param('id') id: string): Promise<PageResult> {
    const { application, clientSecret } = await this.applications.rotateSecret(id, signedIn.user.id);
    const path = `/applications/${application.id}`;
    return seeOther(path, {
      path,
      notice: 'A new secret replaces the old one, which no longer works.',
      secret: { label: 'Application Secret', value: clientSecret },
    });
  }

  @Get('applications/:id/delete')
  async confirmDelete(@SignedIn() signedIn: SignedInUser, @Param('id') id: string): Promise<PageResult> {
    const application = await this.applications.get(id, signedIn.user.id);
    return view((c) => confirmDeletePage({ signedIn, csrfToken: c.csrfToken, application }));
  }

  @Post('applications/:id/delete')
  async remove(@SignedIn() signedIn: SignedInUser, @Param('id') id: string): Promise<PageResult> {
    const application = await this.applications.get(id, signedIn.user.id);
    await this.applications.delete(id, signedIn.user.id);
    return seeOther('/applications', { path: '/applications', notice: `Application “${application.name}” deleted.` });
  }

  @Get('account/authorized')
  async authorized(@SignedIn() signedIn: SignedInUser): Promise<PageResult> {
    const grants = await this.grants.listForUser(signedIn.user.id);
    return view((c) => authorizedPage({ signedIn, csrfToken: c.csrfToken, grants, notice: c.flash?.notice }));
  }

  @Get('account/authorized/:applicationId/revoke')
  async confirmRevokeAccess(@SignedIn() signedIn: SignedInUser, @Param('applicationId') applicationId: string): Promise<PageResult> {
    const grant = await this.grants.getForUser(signedIn.user.id, applicationId);
    return view((c) => confirmRevokeAccessPage({ signedIn, csrfToken: c.csrfToken, grant }));
  }

  @Post('account/authorized/:applicationId/revoke')
  async revokeAccess(@SignedIn() signedIn: SignedInUser, @Param('applicationId') applicationId: string): Promise<PageResult> {
    const grant = await this.grants.getForUser(signedIn.user.id, applicationId);
    await this.grants.revoke(signedIn.user.id, applicationId);
    return seeOther('/account/authorized', { path: '/account/authorized', notice: `Access for “${grant.name}” revoked.` });
  }
}
