import { Module } from '@nestjs/common';
import { OAuthModule } from '../oauth/oauth.module.js';
import { UsersModule } from '../users/users.module.js';
import { DemoSeeder } from './demo-seed.js';
import { EventNotices } from './event-notices.js';
import { NoticeFacts } from './notice-facts.js';
import { EventTables } from './event-tables.js';
import { EventsReaderFactory } from './events.reader.js';
import { EventConnectionResolver, EventsResolver } from './events.resolver.js';
import { EventsService } from './events.service.js';
import { GraphqlReaders } from './graphql-readers.js';
import { AnonymousListings } from './listing-anonymous.js';
import { PublicListingCache } from './public-listing-cache.js';
import { NodeResolver } from './node.resolver.js';
import { OrganizerMembersResolver, OrganizersResolver } from './organizers.resolver.js';
import { OrganizersService } from './organizers.service.js';
import { AttendeesResolver, RegistrationsResolver, ViewerListsResolver } from './registrations.resolver.js';
import { RegistrationsService } from './registrations.service.js';
import { ServiceAccountsService } from './service-accounts.service.js';
import { ServiceAccountsResolver } from './service-accounts.resolver.js';
import { SecurityNoticesModule } from '../security-notices/security-notices.module.js';
import { TicketKeysController } from './ticket-keys.controller.js';
import { TicketCodes } from './ticket-codes.js';
import { TicketTypesResolver } from './ticket-types.resolver.js';
import { TicketTypesService } from './ticket-types.service.js';
import { Waitlist } from './waitlist.js';
import { WebhookOutbox } from './webhook-outbox.js';
import { AuthModule } from '../auth/auth.module.js';
import { DatabaseModule } from '../database/database.module.js';
import { JobsModule } from '../jobs/jobs.module.js';

/**
 * The events domain: organizers and their teams, events, ticket types, registrations and attendees.
 * Services hold every rule; the resolvers (and the legacy REST controllers) only translate.
 */
@Module({
  // OAuthModule: its signing keys sign ticket codes (TicketCodes); /check-in/keys publishes them longer.
  imports: [JobsModule, DatabaseModule, UsersModule, OAuthModule, AuthModule, SecurityNoticesModule],
  controllers: [TicketKeysController],
  providers: [
    EventTables,
    OrganizersService,
    EventsService,
    TicketTypesService,
    RegistrationsService,
    ServiceAccountsService,
    TicketCodes,
    EventsReaderFactory,
    PublicListingCache,
    AnonymousListings,
    DemoSeeder,
    GraphqlReaders,
    EventsResolver,
    EventConnectionResolver,
    OrganizersResolver,
    OrganizerMembersResolver,
    TicketTypesResolver,
    RegistrationsResolver,
    AttendeesResolver,
    ViewerListsResolver,
    NodeResolver,
    ServiceAccountsResolver,
    EventNotices,
    WebhookOutbox,
    NoticeFacts,
    Waitlist,
  ],
  exports: [
    EventNotices,
    NoticeFacts,
    EventTables,
    OrganizersService,
    EventsService,
    TicketTypesService,
    RegistrationsService,
    ServiceAccountsService,
    TicketCodes,
    EventsReaderFactory,
    GraphqlReaders,
  ],
})
export class EventsModule {}
