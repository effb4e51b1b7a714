import { Injectable } from '@nestjs/common';
import type { Application } from '../oauth/clients/application.model.js';
import { ApplicationError } from '../oauth/clients/applications.errors.js';
import { ApplicationsService, RegisteredApplication } from '../oauth/clients/applications.service.js';
import { SecurityNotices } from '../security-notices/security-notices.js';
import { isUuid } from '../database/uuid.js';
import { EventError } from './events.errors.js';
import { EventsPolicy } from './events.policy.js';
import type { EventsReader } from './events.reader.js';
import { OrganizersService } from './organizers.service.js';

/** A service account as its organizer's owners see it: the application and the organizer's name. */
export interface ServiceAccount extends Application {
  organizerId: string;
  organizerName: string;
}

/**
 * An organizer's service accounts (docs/oauth.md, "Service accounts and client_credentials"):
 * confidential applications that act for the organizer with `client_credentials`, never for a person.
 * Only the organizer's owners create, list, revoke and delete them (EventsPolicy.canManageServiceAccounts);
 * its owners and admins are told by a security notice when one is created or deleted. The application
 * itself (secret, tokens, deletion across instances) is the OAuth server's.
 */
@Injectable()
export class ServiceAccountsService {
  constructor(
    private readonly applications: ApplicationsService,
    private readonly organizers: OrganizersService,
    private readonly notices: SecurityNotices,
  ) {}

  /** The organizer's service accounts, newest first. */
  async list(reader: EventsReader, organizerId: string): Promise<ServiceAccount[]> {
    const name = await this.requireOwner(reader, organizerId, "see this organizer's service accounts");
    return (await this.applications.listForOrganizer(organizerId)).map((a) => withOrganizer(a, name));
  }

  /** A new service account with the scopes granted; its secret is returned this once. */
  async create(
    reader: EventsReader,
    organizerId: string,
    input: { name: string; scopes: string[] },
  ): Promise<RegisteredApplication & { application: ServiceAccount }> {
    const organizer = await this.requireOwner(reader, organizerId, 'create service accounts for this organizer');
    const { application, clientSecret } = await this.applications.createServiceAccount(organizerId, input);
    await this.tell(reader, organizerId, (by) => ({
      kind: 'service-account-created',
      organizer,
      name: application.name,
      scopes: application.scopes,
      by,
    }));
    return { application: withOrganizer(application, organizer), clientSecret };
  }

  /** One service account, for an owner of its organizer; any other caller is told there is none. */
  async get(reader: EventsReader, id: string): Promise<ServiceAccount> {
    const application = await this.applications.get(id).catch(() => null);
    if (!application?.organizerId) throw notFound(id);
    const organizer = await this.requireOwner(reader, application.organizerId, 'see this service account').catch(() => {
      throw notFound(id);
    });
    return withOrganizer(application, organizer);
  }

  /** The service account with this client id, for an owner of its organizer; any other caller is told there is none. */
  async getByClientId(reader: EventsReader, clientId: string): Promise<ServiceAccount> {
    const found = await this.applications.findByClientId(clientId);
    if (!found?.organizerId) throw notFound(clientId);
    return this.get(reader, found.id);
  }

  /** Ends every token the service account holds, at once and on every instance; its secret still works. */
  async revokeTokens(reader: EventsReader, id: string): Promise<ServiceAccount> {
    const account = await this.get(reader, id);
    await this.applications.revokeServiceAccountTokens(account.id, account.organizerId);
    return account;
  }

  /** Deletes the service account: its secret and every token it holds stop working at once. */
  async delete(reader: EventsReader, id: string): Promise<ServiceAccount> {
    const account = await this.get(reader, id);
    await this.applications.delete(account.id);
    await this.tell(reader, account.organizerId, (by) => ({
      kind: 'service-account-deleted',
      organizer: account.organizerName,
      name: account.name,
      by,
    }));
    return account;
  }

  /** The organizer's name, when the caller owns it. */
  private async requireOwner(reader: EventsReader, organizerId: string, action: string): Promise<string> {
    if (!isUuid(organizerId)) throw EventError.notFound('Organizer', 'organizerId');
    await this.organizers.requireRole(reader, organizerId, EventsPolicy.canManageServiceAccounts, action);
    return (await reader.organizers.load(organizerId))!.name;
  }

  /** A security notice to the organizer's owners and admins, naming who did it. */
  private async tell(
    reader: EventsReader,
    organizerId: string,
    notice: (by: string) => Parameters<SecurityNotices['notify']>[1],
  ): Promise<void> {
    const by = reader.userId ? ((await reader.users.load(reader.userId))?.username ?? 'unknown') : 'unknown';
    for (const userId of await this.organizers.managerIds(organizerId)) await this.notices.notify(userId, notice(by));
  }
}

function withOrganizer(application: Application, organizerName: string): ServiceAccount {
  return { ...application, organizerId: application.organizerId!, organizerName };
}

function notFound(id: string): ApplicationError {
  return new ApplicationError('APPLICATION_NOT_FOUND', `No service account with id "${id}"`, 'id');
}
