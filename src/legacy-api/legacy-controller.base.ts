import { Inject } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { Clock } from '../clock/clock.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { EventError, uuidOrNotFound } from '../events/events.errors.js';
import type { Event } from '../events/events.model.js';
import { EventsReader, EventsReaderFactory } from '../events/events.reader.js';
import { EventsService } from '../events/events.service.js';

/** What every legacy controller needs: the request's reader, the clock, the config, event lookup. */
export abstract class LegacyController {
  @Inject(EventsReaderFactory) protected readonly readers!: EventsReaderFactory;
  @Inject(EventsService) protected readonly eventsService!: EventsService;
  @Inject(Clock) protected readonly clock!: Clock;
  @Inject(APP_CONFIG) protected readonly config!: AppConfig;

  protected reader(request: FastifyRequest): EventsReader {
    return this.readers.forPrincipal(request.principal);
  }

  /** An event by id or slug, if the caller may see it; 404 otherwise. */
  protected async event(reader: EventsReader, idOrSlug: string): Promise<Event> {
    const event = await this.eventsService.findVisibleByIdOrSlug(reader, idOrSlug);
    if (!event) throw EventError.notFound('Event');
    return event;
  }

  /** A path id that must be a uuid; anything else cannot exist. */
  protected uuid(value: string, what: 'TicketType' | 'Registration' | 'Attendee'): string {
    return uuidOrNotFound(value, what);
  }
}
