import { Body, Controller, Get, Inject, Param, Post } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { DomainError, failuresOf, InvalidInput } from '../errors/domain-error.js';
import { type Application, CLIENT_TYPES, type ClientType } from '../oauth/clients/application.model.js';
import { ApplicationError } from '../oauth/clients/applications.errors.js';
import { ApplicationsService } from '../oauth/clients/applications.service.js';
import { GrantsService } from '../oauth/consent/grants.service.js';
import type { SignedInUser } from '../web/page-sessions.js';
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
import { confirmDeleteSecretPage, type CredentialFormValues } from './application-credentials.pages.js';

function applicationInput(body: Record<string, unknown>) {
  return {
    name: formText(body.name),
    redirectUris: formText(body.redirect_uris).split(/\r?\n/),
    postLogoutRedirectUris: formText(body.post_logout_redirect_uris).split(/\r?\n/),
    backchannelLogoutUri: formText(body.backchannel_logout_uri) || null,
    // Absent (a form without the choice): registering takes public, an update keeps what the application has.
    subjectType: body.subject_type === undefined ? undefined : (formText(body.subject_type) as Application['subjectType']),
    scopes: formList(body.scopes),
    // Only the settings form has these; absent, the application keeps what it has (or gets the defaults).
    idTokenSignedResponseAlg: body.id_token_signed_response_alg === undefined ? undefined : formText(body.id_token_signed_response_alg),
    accessTokenFormat: body.access_token_format === undefined ? undefined : formText(body.access_token_format),
    clientUri: formText(body.client_uri),
    logoUri: formText(body.logo_uri),
    description: formText(body.description),
  };
}

function credentialValues(body: Record<string, unknown>): CredentialFormValues {
  return { method: formText(body.token_endpoint_auth_method), jwks: formText(body.jwks), jwksUri: formText(body.jwks_uri) };
}

/**
 * How a confidential client authenticates, from the form: a secret unless public keys were chosen, then
 * the keys (a JWK Set pasted in, or its address). Undefined for a form without the choice.
 */
function authenticationInput(body: Record<string, unknown>, clientType: ClientType | undefined) {
  const values = credentialValues(body);
  if (clientType !== 'confidential' || values.method !== 'private_key_jwt') return undefined;
  let jwks: unknown;
  if (values.jwks.trim()) {
    try {
      jwks = JSON.parse(values.jwks);
    } catch {
      throw new ApplicationError('INVALID_KEYS', 'The public keys must be a JSON Web Key Set: {"keys":[…]}', 'jwks');
    }
  }
  return { tokenEndpointAuthMethod: 'private_key_jwt', jwks, jwksUri: values.jwksUri.trim() || undefined };
}

function secretOf(which: string): 'current' | 'previous' {
  if (which !== 'current' && which !== 'previous') throw new ApplicationError('APPLICATION_NOT_FOUND', `No secret "${which}"`, 'id');
  return which;
}

/** What was typed, to show the form again with its errors. */
function formValues(body: Record<string, unknown>, scopes: string[]): ApplicationFormValues {
  return {
    name: formText(body.name),
    redirectUris: formText(body.redirect_uris),
    postLogoutRedirectUris: formText(body.post_logout_redirect_uris),
    backchannelLogoutUri: formText(body.backchannel_logout_uri),
    subjectType: formText(body.subject_type),
    scopes,
    idTokenSignedResponseAlg: body.id_token_signed_response_alg === undefined ? undefined : formText(body.id_token_signed_response_alg),
    accessTokenFormat: body.access_token_format === undefined ? undefined : formText(body.access_token_format),
    clientUri: formText(body.client_uri),
    logoUri: formText(body.logo_uri),
    description: formText(body.description),
  };
}

/**
 * Each invalid field's message, beside its input; a bad URI of a list names its line, as the form takes
 * one per line ("Line 3: Redirect URIs must use https…").
 */
function formErrors(err: DomainError): Record<string, string> {
  const numbered = failuresOf(err).map((f) =>
    f instanceof ApplicationError && f.index !== undefined
      ? new ApplicationError('INVALID_REDIRECT_URI', `Line ${f.index + 1}: ${f.message}`, f.field)
      : f,
  );
  return fieldErrors(numbered.length === 1 ? numbered[0]! : new InvalidInput(numbered));
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
      const authentication = authenticationInput(body, clientType);
      const { application, clientSecret } = await this.applications.create(signedIn.user.id, { ...input, authentication }, clientType);
      const path = `/applications/${application.id}`;
      return seeOther(path, {
        path,
        notice: 'Application registered.',
        ...(clientSecret === undefined ? {} : { secret: { label: 'Application Secret', value: clientSecret } }),
      });
    } catch (err) {
      if (!isInvalidInput(err)) throw err;
      const applications = await this.applications.listForOwner(signedIn.user.id);
      const values = { ...formValues(body, input.scopes), clientType: formText(body.client_type), credentials: credentialValues(body) };
      return view((c) => applicationsPage({ signedIn, csrfToken: c.csrfToken, applications, errors: formErrors(err), values }), {
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
      const keys = current.tokenEndpointAuthMethod === 'private_key_jwt';
      const authentication = keys
        ? authenticationInput({ ...body, token_endpoint_auth_method: 'private_key_jwt' }, 'confidential')
        : undefined;
      await this.applications.update(id, signedIn.user.id, { ...input, authentication });
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
            errors: formErrors(err),
            values,
            credentials: credentialValues(body),
          }),
        { status: 422 },
      );
    }
  }

  /** A second secret beside the current one (a rotation without downtime), shown once. */
  @Post('applications/:id/secrets')
  async addSecret(@SignedIn() signedIn: SignedInUser, @Param('id') id: string): Promise<PageResult> {
    const { application, clientSecret } = await this.applications.addSecret(id, signedIn.user.id);
    const path = `/applications/${application.id}`;
    return seeOther(path, {
      path,
      notice: 'A new secret was generated. The older one keeps working until you delete it.',
      secret: { label: 'Application Secret', value: clientSecret },
    });
  }

  @Get('applications/:id/secrets/:which/delete')
  async confirmDeleteSecret(
    @SignedIn() signedIn: SignedInUser,
    @Param('id') id: string,
    @Param('which') which: string,
  ): Promise<PageResult> {
    const application = await this.applications.get(id, signedIn.user.id);
    if (!application.previousSecretCreatedAt)
      throw new ApplicationError('ONE_SECRET', 'This is the application’s only secret: generate a new one first', 'id');
    return view((c) => confirmDeleteSecretPage({ signedIn, csrfToken: c.csrfToken, application, which: secretOf(which) }));
  }

  @Post('applications/:id/secrets/:which/delete')
  async deleteSecret(@SignedIn() signedIn: SignedInUser, @Param('id') id: string, @Param('which') which: string): Promise<PageResult> {
    const application = await this.applications.deleteSecret(id, secretOf(which), signedIn.user.id);
    const path = `/applications/${application.id}`;
    return seeOther(path, { path, notice: 'Secret deleted: it no longer works.' });
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
