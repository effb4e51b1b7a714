import { Body, Controller, Delete, HttpCode, Param, Patch, Req } from '@nestjs/common';
import { ApiBody, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { TicketTypesService } from '../events/ticket-types.service.js';
import { LegacyController } from './legacy-controller.base.js';
import { LegacyWrite } from './legacy-decorators.js';
import { parse } from './legacy-http.js';
import { ticketTypeJson } from './legacy-representations.js';
import { toTicketTypeChanges, UpdateTicketTypeBody } from './legacy-requests.js';
import { ref } from './openapi.js';
import { RateLimited } from '../rate-limits/rate-limited.decorator.js';

@ApiTags('ticket types')
@RateLimited()
@Controller('api/ticket_types')
export class LegacyTicketTypesController extends LegacyController {
  constructor(private readonly ticketTypes: TicketTypesService) {
    super();
  }

  @Patch(':id')
  @LegacyWrite('Change a ticket type (owner or admin)', 'mutation { updateTicketType(input: …) }')
  @ApiBody({ schema: ref('UpdateTicketType') })
  @ApiOkResponse({ schema: ref('TicketType') })
  async update(@Req() request: FastifyRequest, @Param('id') id: string, @Body() body: unknown) {
    const input = parse(UpdateTicketTypeBody, body);
    return ticketTypeJson(await this.ticketTypes.update(this.reader(request), this.uuid(id, 'TicketType'), toTicketTypeChanges(input)));
  }

  @Delete(':id')
  @HttpCode(204)
  @LegacyWrite('Delete a ticket type nobody registered for', 'mutation { deleteTicketType(input: …) }')
  @ApiNoContentResponse({ description: 'Deleted' })
  async delete(@Req() request: FastifyRequest, @Param('id') id: string): Promise<void> {
    await this.ticketTypes.delete(this.reader(request), this.uuid(id, 'TicketType'));
  }
}
