import { Body, Controller, Get, Inject, Param, Post } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { DomainError } from '../errors/domain-error.js';
import { EventsReaderFactory } from '../events/events.reader.js';
import { OrganizersService } from '../events/organizers.service.js';
import { ServiceAccountsService } from '../events/service-accounts.service.js';
import { fieldErrors, formList, formText } from '../web/form-values.js';
import type { PageResult } from '../web/page-result.js';
import { seeOther, view } from '../web/page-result.js';
import type { SignedInUser } from '../web/page-sessions.js';
import { Pages, SignedIn } from '../web/pages.decorator.js';
import {
  confirmDeleteServiceAccountPage,
  confirmRevokeServiceAccountTokensPage,
  serviceAccountPage,
  serviceAccountsPage,
  ServiceAccountFormValues,
} from './service-accounts.pages.js';

/**
 * Service accounts of the organizers the signed-in user owns: list, create (secret shown once), revoke
 * their tokens, delete. The rules are ServiceAccountsService's; a service account the user may not
 * manage, or an unknown id, is a 404 page.
 */
@Controller('service-accounts')
@Pages()
export class ServiceAccountsController {
  constructor(
    private readonly serviceAccounts: ServiceAccountsService,
    private readonly organizers: OrganizersService,
    private readonly readers: EventsReaderFactory,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get()
  async index(@SignedIn() signedIn: SignedInUser): Promise<PageResult> {
    const organizers = await this.owned(signedIn);
    return view((c) => serviceAccountsPage({ signedIn, csrfToken: c.csrfToken, organizers, notice: c.flash?.notice }));
  }

  @Post()
  async create(@SignedIn() signedIn: SignedInUser, @Body() body: Record<string, unknown>): Promise<PageResult> {
    const values: ServiceAccountFormValues = {
      organizerId: formText(body.organizer_id),
      name: formText(body.name),
      scopes: formList(body.scopes),
    };
    try {
      const { application, clientSecret } = await this.serviceAccounts.create(
        this.readers.create(signedIn.user.id),
        values.organizerId,
        values,
      );
      const path = `/service-accounts/${application.id}`;
      return seeOther(path, { path, notice: 'Service account created.', secret: { label: 'Client secret', value: clientSecret! } });
    } catch (err) {
      if (!(err instanceof DomainError) || err.kind !== 'invalid') throw err;
      const organizers = await this.owned(signedIn);
      const errors = fieldErrors(err);
      return view((c) => serviceAccountsPage({ signedIn, csrfToken: c.csrfToken, organizers, errors, values }), { status: 422 });
    }
  }

  @Get(':id')
  async show(@SignedIn() signedIn: SignedInUser, @Param('id') id: string): Promise<PageResult> {
    const account = await this.serviceAccounts.get(this.readers.create(signedIn.user.id), id);
    return view((c) =>
      serviceAccountPage({
        signedIn,
        csrfToken: c.csrfToken,
        account,
        baseUrl: this.config.baseUrl,
        secret: c.flash?.secret?.value,
        notice: c.flash?.notice,
      }),
    );
  }

  @Get(':id/revoke')
  async confirmRevoke(@SignedIn() signedIn: SignedInUser, @Param('id') id: string): Promise<PageResult> {
    const account = await this.serviceAccounts.get(this.readers.create(signedIn.user.id), id);
    return view((c) => confirmRevokeServiceAccountTokensPage({ signedIn, csrfToken: c.csrfToken, account }));
  }

  @Post(':id/revoke')
  async revoke(@SignedIn() signedIn: SignedInUser, @Param('id') id: string): Promise<PageResult> {
    const account = await this.serviceAccounts.revokeTokens(this.readers.create(signedIn.user.id), id);
    const path = `/service-accounts/${account.id}`;
    return seeOther(path, { path, notice: 'Its tokens were revoked.' });
  }

  @Get(':id/delete')
  async confirmDelete(@SignedIn() signedIn: SignedInUser, @Param('id') id: string): Promise<PageResult> {
    const account = await this.serviceAccounts.get(this.readers.create(signedIn.user.id), id);
    return view((c) => confirmDeleteServiceAccountPage({ signedIn, csrfToken: c.csrfToken, account }));
  }

  @Post(':id/delete')
  async remove(@SignedIn() signedIn: SignedInUser, @Param('id') id: string): Promise<PageResult> {
    const account = await this.serviceAccounts.delete(this.readers.create(signedIn.user.id), id);
    return seeOther('/service-accounts', { path: '/service-accounts', notice: `Service account “${account.name}” deleted.` });
  }

  /** The organizers the user owns, each with its service accounts. */
  private async owned(signedIn: SignedInUser) {
    const reader = this.readers.create(signedIn.user.id);
    const organizers = await this.organizers.ownedBy(signedIn.user.id);
    return Promise.all(organizers.map(async (o) => ({ ...o, accounts: await this.serviceAccounts.list(reader, o.id) })));
  }
}
