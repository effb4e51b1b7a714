import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiParam, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RegistrationsService } from '../events/registrations.service.js';
import { TicketTypesService } from '../events/ticket-types.service.js';
import { LegacyController } from './legacy-controller.base.js';
import { LegacyRead, LegacyWrite, Paged } from './legacy-decorators.js';
import { parse, setPagingHeaders } from './legacy-http.js';
import { eventJson, registrationJson, ticketTypeJson } from './legacy-representations.js';
import {
  CreateEventBody,
  CreateTicketTypeBody,
  ListEventsQuery,
  RegisterBody,
  RegistrationsQuery,
  toEventChanges,
  toTicketTypeChanges,
  UpdateEventBody,
} from './legacy-requests.js';
import { listOf, ref } from './openapi.js';
import { RateLimited } from '../rate-limits/rate-limited.decorator.js';

const EVENT_ID = ApiParam({ name: 'id', description: 'Event id (uuid) or slug' });

@ApiTags('events')
@RateLimited()
@Controller('api/events')
export class LegacyEventsController extends LegacyController {
  constructor(
    private readonly ticketTypes: TicketTypesService,
    private readonly registrations: RegistrationsService,
  ) {
    super();
  }

  @Get()
  @LegacyRead('Published public events by start time', 'query { events(first: …, filter: …, orderBy: …) }')
  @Paged()
  @ApiQuery({ name: 'starts_after', required: false, description: 'ISO 8601' })
  @ApiQuery({ name: 'starts_before', required: false, description: 'ISO 8601' })
  @ApiQuery({ name: 'organizer', required: false, description: 'Organizer slug' })
  @ApiQuery({ name: 'search', required: false, description: 'Text in the title' })
  @ApiQuery({ name: 'sort', required: false, enum: ['asc', 'desc'] })
  @ApiOkResponse({ schema: listOf('Event') })
  async list(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Query() query: unknown) {
    const q = parse(ListEventsQuery, query);
    const result = await this.eventsService.listNumbered(
      { startsAfter: q.starts_after, startsBefore: q.starts_before, organizerSlug: q.organizer, search: q.search },
      q.sort === 'desc' ? 'DESC' : 'ASC',
      q.page,
      q.per_page,
    );
    setPagingHeaders(request, reply, this.config.baseUrl, result);
    const reader = this.reader(request);
    return Promise.all(result.items.map((e) => eventJson(e, reader, this.eventsService)));
  }

  @Post()
  @LegacyWrite('Create a draft event (owner or admin of the organizer)', 'mutation { createEvent(input: …) }')
  @ApiBody({ schema: ref('CreateEvent') })
  @ApiCreatedResponse({ schema: ref('Event') })
  async create(@Req() request: FastifyRequest, @Body() body: unknown) {
    const input = parse(CreateEventBody, body);
    const reader = this.reader(request);
    const event = await this.eventsService.create(reader, {
      ...toEventChanges(input),
      organizerId: input.organizer_id.toLowerCase(),
      title: input.title,
      startsAt: input.starts_at,
      endsAt: input.ends_at,
      timeZone: input.time_zone,
      format: input.format,
    });
    return eventJson(event, reader, this.eventsService);
  }

  @Get(':id')
  @LegacyRead('An event (unlisted ones too; drafts and private ones for members)', 'query { event(id: …) } or event(slug: …)')
  @EVENT_ID
  @ApiOkResponse({ schema: ref('Event') })
  async get(@Req() request: FastifyRequest, @Param('id') id: string) {
    const reader = this.reader(request);
    return eventJson(await this.event(reader, id), reader, this.eventsService);
  }

  @Patch(':id')
  @LegacyWrite('Change an event (owner or admin)', 'mutation { updateEvent(input: …) }')
  @EVENT_ID
  @ApiBody({ schema: ref('UpdateEvent') })
  @ApiOkResponse({ schema: ref('Event') })
  async update(@Req() request: FastifyRequest, @Param('id') id: string, @Body() body: unknown) {
    const input = parse(UpdateEventBody, body);
    const reader = this.reader(request);
    const event = await this.event(reader, id);
    const updated = await this.eventsService.update(reader, event.id, toEventChanges(input));
    return eventJson(updated, reader, this.eventsService);
  }

  @Delete(':id')
  @HttpCode(204)
  @LegacyWrite('Delete a draft event', 'mutation { deleteEvent(input: …) }')
  @EVENT_ID
  @ApiNoContentResponse({ description: 'Deleted' })
  async delete(@Req() request: FastifyRequest, @Param('id') id: string): Promise<void> {
    const reader = this.reader(request);
    await this.eventsService.delete(reader, (await this.event(reader, id)).id);
  }

  @Post(':id/publish')
  @HttpCode(200)
  @LegacyWrite('Publish a draft event', 'mutation { publishEvent(input: …) }')
  @EVENT_ID
  @ApiOkResponse({ schema: ref('Event') })
  async publish(@Req() request: FastifyRequest, @Param('id') id: string) {
    const reader = this.reader(request);
    return eventJson(await this.eventsService.publish(reader, (await this.event(reader, id)).id), reader, this.eventsService);
  }

  @Post(':id/cancel')
  @HttpCode(200)
  @LegacyWrite('Cancel a published event', 'mutation { cancelEvent(input: …) }')
  @EVENT_ID
  @ApiOkResponse({ schema: ref('Event') })
  async cancel(@Req() request: FastifyRequest, @Param('id') id: string) {
    const reader = this.reader(request);
    return eventJson(await this.eventsService.cancel(reader, (await this.event(reader, id)).id), reader, this.eventsService);
  }

  @Get(':id/ticket_types')
  @LegacyRead('Ticket types of an event (hidden ones for members)', 'query { event(id: …) { ticketTypes } }')
  @EVENT_ID
  @ApiOkResponse({ schema: listOf('TicketType') })
  async ticketTypesOf(@Req() request: FastifyRequest, @Param('id') id: string) {
    const reader = this.reader(request);
    return (await this.ticketTypes.visibleOfEvent(reader, await this.event(reader, id))).map(ticketTypeJson);
  }

  @Post(':id/ticket_types')
  @LegacyWrite('Add a ticket type (owner or admin)', 'mutation { createTicketType(input: …) }')
  @EVENT_ID
  @ApiBody({ schema: ref('CreateTicketType') })
  @ApiCreatedResponse({ schema: ref('TicketType') })
  async createTicketType(@Req() request: FastifyRequest, @Param('id') id: string, @Body() body: unknown) {
    const input = parse(CreateTicketTypeBody, body);
    const reader = this.reader(request);
    const event = await this.event(reader, id);
    return ticketTypeJson(
      await this.ticketTypes.create(reader, event.id, { ...toTicketTypeChanges(input), name: input.name, price: input.price }),
    );
  }

  @Post(':id/registrations')
  @LegacyWrite('Register for an event; when full, the registration joins the waitlist', 'mutation { registerForEvent(input: …) }')
  @EVENT_ID
  @ApiBody({ schema: ref('Register') })
  @ApiCreatedResponse({ schema: ref('Registration') })
  async register(@Req() request: FastifyRequest, @Param('id') id: string, @Body() body: unknown) {
    const input = parse(RegisterBody, body);
    const reader = this.reader(request);
    const event = await this.event(reader, id);
    const registration = await this.registrations.register(reader, {
      eventId: event.id,
      ticketTypeId: input.ticket_type_id.toLowerCase(),
      attendees: input.attendees,
    });
    return registrationJson(registration, reader);
  }

  @Get(':id/registrations')
  @LegacyRead(
    "An event's registrations with their attendees (members of the organizer)",
    'query { event(id: …) { registrations(first: …) } }',
  )
  @EVENT_ID
  @Paged()
  @ApiQuery({ name: 'status', required: false, enum: ['confirmed', 'waitlisted', 'cancelled'] })
  @ApiOkResponse({ schema: listOf('Registration') })
  async registrationsOf(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Param('id') id: string,
    @Query() query: unknown,
  ) {
    const q = parse(RegistrationsQuery, query);
    const reader = this.reader(request);
    const event = await this.event(reader, id);
    const result = await this.registrations.listOfEventNumbered(reader, event.id, q.status ?? null, q.page, q.per_page);
    setPagingHeaders(request, reply, this.config.baseUrl, result);
    return Promise.all(result.items.map((r) => registrationJson(r, reader)));
  }
}
