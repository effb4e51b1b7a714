import { personOf } from '../auth/principal.js';
import { Body, Controller, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { EventError } from '../events/events.errors.js';
import { RegistrationsService } from '../events/registrations.service.js';
import { LegacyController } from './legacy-controller.base.js';
import { LegacyRead, LegacyWrite, Paged } from './legacy-decorators.js';
import { parse, setPagingHeaders } from './legacy-http.js';
import { attendeeJson, checkInJson, registrationJson } from './legacy-representations.js';
import { CheckInBody, RegistrationsQuery } from './legacy-requests.js';
import { listOf, ref } from './openapi.js';
import { RateLimited } from '../rate-limits/rate-limited.decorator.js';

@ApiTags('registrations')
@RateLimited()
@Controller('api')
export class LegacyRegistrationsController extends LegacyController {
  constructor(private readonly registrations: RegistrationsService) {
    super();
  }

  @Get('registrations')
  @LegacyRead('Your registrations, newest first', 'query { viewer { registrations(first: …, status: …) } }', { signedIn: true })
  @Paged()
  @ApiQuery({ name: 'status', required: false, enum: ['confirmed', 'waitlisted', 'cancelled'] })
  @ApiOkResponse({ schema: listOf('Registration') })
  async mine(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Query() query: unknown) {
    const q = parse(RegistrationsQuery, query);
    const reader = this.reader(request);
    const result = await this.registrations.listOfUserNumbered(personOf(request.principal!).id, q.status ?? null, q.page, q.per_page);
    setPagingHeaders(request, reply, this.config.baseUrl, result);
    return Promise.all(result.items.map((r) => registrationJson(r, reader)));
  }

  @Get('registrations/:id')
  @LegacyRead('A registration (yours, or of an event you organize)', 'query { node(id: …) { ... on Registration } }')
  @ApiOkResponse({ schema: ref('Registration') })
  async get(@Req() request: FastifyRequest, @Param('id') id: string) {
    const reader = this.reader(request);
    const registration = await this.registrations.findVisible(reader, this.uuid(id, 'Registration'));
    if (!registration) throw EventError.notFound('Registration');
    return registrationJson(registration, reader);
  }

  @Post('registrations/:id/cancel')
  @HttpCode(200)
  @LegacyWrite('Cancel a registration; freed seats go to the waitlist', 'mutation { cancelRegistration(input: …) }')
  @ApiOkResponse({ schema: ref('Registration') })
  async cancel(@Req() request: FastifyRequest, @Param('id') id: string) {
    const reader = this.reader(request);
    return registrationJson(await this.registrations.cancel(reader, this.uuid(id, 'Registration')), reader);
  }

  @Post('attendees/:id/check_in')
  @HttpCode(200)
  @LegacyWrite(
    'Check an attendee in (any member of the organizer); again: 200 with the first time and already_checked_in',
    'mutation { checkInAttendee(input: { attendeeId: … }) }',
  )
  @ApiOkResponse({ schema: ref('CheckIn') })
  async checkIn(@Req() request: FastifyRequest, @Param('id') id: string) {
    return checkInJson(await this.registrations.checkIn(this.reader(request), { attendeeId: this.uuid(id, 'Attendee') }));
  }

  @Post('attendees/:id/undo_check_in')
  @HttpCode(200)
  @LegacyWrite(
    "Undo an attendee's check-in (any member of the organizer); not checked in: 200 with the attendee as it is",
    'mutation { undoCheckIn(input: { attendeeId: … }) }',
  )
  @ApiOkResponse({ schema: ref('Attendee') })
  async undoCheckIn(@Req() request: FastifyRequest, @Param('id') id: string) {
    return attendeeJson(await this.registrations.undoCheckIn(this.reader(request), this.uuid(id, 'Attendee')));
  }

  @Post('check_ins')
  @HttpCode(200)
  @LegacyWrite(
    'Check in the attendee of a scanned ticket code, or an attendee by id (any member of the organizer); again: 200 with the first time and already_checked_in',
    'mutation { checkInAttendee(input: { code: … }) }',
  )
  @ApiBody({ schema: ref('CheckInRequest') })
  @ApiOkResponse({ schema: ref('CheckIn') })
  async checkInByCode(@Req() request: FastifyRequest, @Body() body: unknown) {
    const b = parse(CheckInBody, body);
    return checkInJson(
      await this.registrations.checkIn(this.reader(request), { code: b.code, attendeeId: b.attendee_id, eventId: b.event_id }),
    );
  }
}
