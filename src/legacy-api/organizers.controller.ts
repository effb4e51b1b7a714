import { personOf } from '../auth/principal.js';
import { Body, Controller, Get, Param, Patch, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { EventError } from '../events/events.errors.js';
import type { Organizer } from '../events/events.model.js';
import { OrganizersService } from '../events/organizers.service.js';
import { LegacyController } from './legacy-controller.base.js';
import { LegacyRead, LegacyWrite, Paged } from './legacy-decorators.js';
import { pagingQuery, parse, setPagingHeaders } from './legacy-http.js';
import { eventJson, memberJson, organizerJson } from './legacy-representations.js';
import { CreateOrganizerBody, UpdateOrganizerBody } from './legacy-requests.js';
import { listOf, ref } from './openapi.js';
import { RateLimited } from '../rate-limits/rate-limited.decorator.js';

@ApiTags('organizers')
@RateLimited()
@Controller('api/organizers')
export class LegacyOrganizersController extends LegacyController {
  constructor(private readonly organizers: OrganizersService) {
    super();
  }

  @Post()
  @LegacyWrite('Create an organizer (you become its owner)', 'mutation { createOrganizer(input: …) }')
  @ApiBody({ schema: ref('CreateOrganizer') })
  @ApiCreatedResponse({ schema: ref('Organizer') })
  async create(@Req() request: FastifyRequest, @Body() body: unknown) {
    const input = parse(CreateOrganizerBody, body);
    return organizerJson(
      await this.organizers.create(personOf(request.principal!).id, {
        slug: input.slug,
        name: input.name,
        description: input.description,
        websiteUrl: input.website_url,
      }),
    );
  }

  @Get(':slug')
  @LegacyRead('An organizer', 'query { organizer(slug: …) }')
  @ApiOkResponse({ schema: ref('Organizer') })
  async get(@Param('slug') slug: string) {
    return organizerJson(await this.find(slug));
  }

  @Patch(':slug')
  @LegacyWrite("Change an organizer's page (owner or admin)", 'mutation { updateOrganizer(input: …) }')
  @ApiBody({ schema: ref('UpdateOrganizer') })
  @ApiOkResponse({ schema: ref('Organizer') })
  async update(@Req() request: FastifyRequest, @Param('slug') slug: string, @Body() body: unknown) {
    const input = parse(UpdateOrganizerBody, body);
    const organizer = await this.find(slug);
    return organizerJson(
      await this.organizers.update(this.reader(request), organizer.id, {
        name: input.name,
        description: input.description,
        websiteUrl: input.website_url,
      }),
    );
  }

  @Get(':slug/events')
  @LegacyRead("An organizer's events (members see drafts and private ones)", 'query { organizer(slug: …) { events(first: …) } }')
  @Paged()
  @ApiOkResponse({ schema: listOf('Event') })
  async events(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Param('slug') slug: string,
    @Query() query: unknown,
  ) {
    const { page, per_page } = parse(pagingQuery, query);
    const organizer = await this.find(slug);
    const reader = this.reader(request);
    const result = await this.eventsService.listOfOrganizerNumbered(reader, organizer.id, page, per_page);
    setPagingHeaders(request, reply, this.config.baseUrl, result);
    return Promise.all(result.items.map((e) => eventJson(e, reader, this.eventsService)));
  }

  @Get(':slug/members')
  @LegacyRead("An organizer's team (members only)", 'query { organizer(slug: …) { members(first: …) } }', { signedIn: true })
  @ApiOkResponse({ schema: listOf('OrganizerMember') })
  async members(@Req() request: FastifyRequest, @Param('slug') slug: string) {
    const organizer = await this.find(slug);
    const reader = this.reader(request);
    await this.organizers.requireCanSeeTeam(reader, organizer.id);
    const page = (await this.organizers.membersPages([organizer.id], { first: 100 })).get(organizer.id)!;
    return Promise.all(page.items.map((item) => memberJson(item.node, reader)));
  }

  private async find(slug: string): Promise<Organizer> {
    const organizer = await this.organizers.findBySlug(slug);
    if (!organizer) throw EventError.notFound('Organizer');
    return organizer;
  }
}
