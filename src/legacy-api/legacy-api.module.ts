import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module.js';
import { LegacyEventsController } from './events.controller.js';
import { LegacyApiHooks } from './legacy-api.hooks.js';
import { LegacyApiUsageService } from './legacy-api-usage.service.js';
import { LegacyMetaController } from './meta.controller.js';
import { LegacyOpenApi } from './openapi.js';
import { LegacyOrganizersController } from './organizers.controller.js';
import { LegacyRegistrationsController } from './registrations.controller.js';
import { LegacyTicketTypesController } from './ticket-types.controller.js';
import { LegacyUserController } from './user.controller.js';
import { DatabaseModule } from '../database/database.module.js';

/**
 * The legacy REST API under /api/: controllers only, over the events services and behind the same
 * global guard as /graphql. Deprecated: every response says so and links to the migration guide.
 */
@Module({
  imports: [DatabaseModule, EventsModule],
  controllers: [
    LegacyUserController,
    LegacyOrganizersController,
    LegacyEventsController,
    LegacyTicketTypesController,
    LegacyRegistrationsController,
    LegacyMetaController,
  ],
  providers: [LegacyApiUsageService, LegacyApiHooks, LegacyOpenApi],
  exports: [LegacyApiUsageService, LegacyOpenApi],
})
export class LegacyApiModule {}
