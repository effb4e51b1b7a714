import { Body, Controller, Get, Inject, Param, Post } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { DomainError } from '../errors/domain-error.js';
import { ResourceServerDeletion } from '../oauth/resources/resource-server-deletion.js';
import { ResourceServersService } from '../oauth/resources/resource-servers.service.js';
import { UsersService } from '../users/users.service.js';
import { fieldErrors, formText } from '../web/form-values.js';
import type { PageResult } from '../web/page-result.js';
import { seeOther, view } from '../web/page-result.js';
import type { SignedInUser } from '../web/page-sessions.js';
import { Pages, SignedIn } from '../web/pages.decorator.js';
import {
  confirmDeleteResourceServerPage,
  confirmRegenerateResourceServerSecretPage,
  resourceServerPage,
  resourceServersPage,
  type ResourceServerFormValues,
} from './resource-servers.pages.js';

/**
 * Resource servers (RFC 8707) the signed-in user registered: list, register (the introspection secret
 * shown once), regenerate the secret, delete. Another user's resource server, or an unknown id, is a 404
 * page (the service's RESOURCE_SERVER_NOT_FOUND).
 */
@Controller('resource-servers')
@Pages()
export class ResourceServersController {
  constructor(
    private readonly servers: ResourceServersService,
    private readonly deletion: ResourceServerDeletion,
    private readonly users: UsersService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get()
  async index(@SignedIn() signedIn: SignedInUser): Promise<PageResult> {
    const servers = await this.servers.listForOwner(signedIn.user.id);
    return view((c) =>
      resourceServersPage({ signedIn, csrfToken: c.csrfToken, servers, baseUrl: this.config.baseUrl, notice: c.flash?.notice }),
    );
  }

  @Post()
  async create(@SignedIn() signedIn: SignedInUser, @Body() body: Record<string, unknown>): Promise<PageResult> {
    const values: ResourceServerFormValues = {
      name: formText(body.name),
      identifier: formText(body.identifier),
      accessTokenFormat: body.access_token_format === undefined ? 'jwt' : formText(body.access_token_format),
    };
    // As for applications: a user's own registrations need a verified address; the operator's CLI does not.
    await this.users.requireVerifiedEmail(signedIn.user.id);
    try {
      const { resourceServer, introspectionSecret } = await this.servers.create(signedIn.user.id, values);
      const path = `/resource-servers/${resourceServer.id}`;
      return seeOther(path, {
        path,
        notice: 'Resource server registered.',
        secret: { label: 'Introspection secret', value: introspectionSecret },
      });
    } catch (err) {
      if (!(err instanceof DomainError) || err.kind !== 'invalid') throw err;
      const servers = await this.servers.listForOwner(signedIn.user.id);
      const errors = fieldErrors(err);
      return view((c) => resourceServersPage({ signedIn, csrfToken: c.csrfToken, servers, baseUrl: this.config.baseUrl, errors, values }), {
        status: 422,
      });
    }
  }

  @Get(':id')
  async show(@SignedIn() signedIn: SignedInUser, @Param('id') id: string): Promise<PageResult> {
    const server = await this.servers.get(id, signedIn.user.id);
    return view((c) =>
      resourceServerPage({
        signedIn,
        csrfToken: c.csrfToken,
        server,
        baseUrl: this.config.baseUrl,
        secret: c.flash?.secret?.value,
        notice: c.flash?.notice,
      }),
    );
  }

  @Get(':id/secret')
  async confirmRegenerate(@SignedIn() signedIn: SignedInUser, @Param('id') id: string): Promise<PageResult> {
    const server = await this.servers.get(id, signedIn.user.id);
    return view((c) => confirmRegenerateResourceServerSecretPage({ signedIn, csrfToken: c.csrfToken, server }));
  }

  @Post(':id/secret')
  async regenerate(@SignedIn() signedIn: SignedInUser, @Param('id') id: string): Promise<PageResult> {
    const { resourceServer, introspectionSecret } = await this.servers.regenerateSecret(id, signedIn.user.id);
    const path = `/resource-servers/${resourceServer.id}`;
    return seeOther(path, {
      path,
      notice: 'A new secret replaces the old one, which no longer works.',
      secret: { label: 'Introspection secret', value: introspectionSecret },
    });
  }

  @Get(':id/delete')
  async confirmDelete(@SignedIn() signedIn: SignedInUser, @Param('id') id: string): Promise<PageResult> {
    const server = await this.servers.get(id, signedIn.user.id);
    return view((c) => confirmDeleteResourceServerPage({ signedIn, csrfToken: c.csrfToken, server }));
  }

  @Post(':id/delete')
  async remove(@SignedIn() signedIn: SignedInUser, @Param('id') id: string): Promise<PageResult> {
    const server = await this.deletion.delete(id, signedIn.user.id);
    return seeOther('/resource-servers', { path: '/resource-servers', notice: `Resource server “${server.name}” deleted.` });
  }
}
