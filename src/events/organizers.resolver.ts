import { Args, Context, Mutation, Query, ResolveField, Resolver } from '@nestjs/graphql';
import { Public } from '../auth/public.decorator.js';
import { toConnection, toPageRequest } from '../graphql/connection.js';
import type { ConnectionArgs } from '../graphql/connection.js';
import type { GraphqlContext } from '../graphql/graphql-context.js';
import type * as G from '../graphql/graphql.schema.js';
import { EventError } from './events.errors.js';
import {
  lower,
  MODEL,
  requireId,
  toGqlEventConnection,
  toGqlMember,
  toGqlOrganizer,
  toGqlUser,
  toPayload,
} from './events.graphql-mappers.js';
import type { GqlMember, GqlOrganizer } from './events.graphql-mappers.js';
import type { OrganizerRoleValue } from './events.model.js';
import { EventsPolicy } from './events.policy.js';
import { EventsService } from './events.service.js';
import { GraphqlReaders } from './graphql-readers.js';
import { OrganizersService } from './organizers.service.js';

@Resolver('Organizer')
export class OrganizersResolver {
  constructor(
    private readonly organizers: OrganizersService,
    private readonly events: EventsService,
    private readonly readers: GraphqlReaders,
  ) {}

  @Query('organizer')
  @Public()
  async organizer(@Args('slug') slug: string, @Context() ctx: GraphqlContext): Promise<GqlOrganizer | null> {
    const organizer = await this.organizers.findBySlug(slug);
    if (organizer) this.readers.of(ctx).organizers.prime(organizer.id, organizer);
    return organizer ? toGqlOrganizer(organizer) : null;
  }

  @ResolveField('viewerRole')
  async viewerRole(organizer: GqlOrganizer, _args: unknown, ctx: GraphqlContext): Promise<G.OrganizerRole | null> {
    const role = await this.readers.of(ctx).role(organizer[MODEL].id);
    return role ? (role.toUpperCase() as G.OrganizerRole) : null;
  }

  @ResolveField('events')
  async eventsOf(organizer: GqlOrganizer, args: ConnectionArgs & { orderBy?: G.EventOrder }, ctx: GraphqlContext) {
    const { page, totalCount } = await this.events.listOfOrganizer(
      this.readers.of(ctx),
      organizer[MODEL].id,
      args.orderBy?.direction ?? 'ASC',
      toPageRequest(args),
    );
    return toGqlEventConnection(page, totalCount);
  }

  @ResolveField('members')
  async members(organizer: GqlOrganizer, args: ConnectionArgs, ctx: GraphqlContext) {
    const organizerId = organizer[MODEL].id;
    if (!EventsPolicy.canSeeAttendees(await this.readers.of(ctx).role(organizerId)))
      throw EventError.forbidden("see this organizer's team");
    const page = await this.readers.page(ctx, 'Organizer.members', args, organizerId, (ids) =>
      this.organizers.membersPages(ids, toPageRequest(args)),
    );
    return toConnection(page, toGqlMember);
  }

  @Mutation('createOrganizer')
  createOrganizer(@Args('input') input: G.CreateOrganizerInput, @Context() ctx: GraphqlContext) {
    return toPayload('organizer', async () => toGqlOrganizer(await this.organizers.create(ctx.principal!.user.id, input)));
  }

  @Mutation('updateOrganizer')
  updateOrganizer(@Args('input') input: G.UpdateOrganizerInput, @Context() ctx: GraphqlContext) {
    return toPayload('organizer', async () =>
      toGqlOrganizer(await this.organizers.update(this.readers.of(ctx), requireId(input.organizerId, 'Organizer', 'organizerId'), input)),
    );
  }

  @Mutation('addOrganizerMember')
  addMember(@Args('input') input: G.AddOrganizerMemberInput, @Context() ctx: GraphqlContext) {
    return toPayload('member', async () =>
      toGqlMember(
        await this.organizers.addMember(
          this.readers.of(ctx),
          requireId(input.organizerId, 'Organizer', 'organizerId'),
          input.username,
          lower<OrganizerRoleValue>(input.role),
        ),
      ),
    );
  }

  @Mutation('updateOrganizerMember')
  updateMember(@Args('input') input: G.UpdateOrganizerMemberInput, @Context() ctx: GraphqlContext) {
    return toPayload('member', async () =>
      toGqlMember(
        await this.organizers.updateMember(
          this.readers.of(ctx),
          requireId(input.organizerId, 'Organizer', 'organizerId'),
          input.username,
          lower<OrganizerRoleValue>(input.role),
        ),
      ),
    );
  }

  @Mutation('removeOrganizerMember')
  removeMember(@Args('input') input: G.RemoveOrganizerMemberInput, @Context() ctx: GraphqlContext) {
    return toPayload('organizer', async () =>
      toGqlOrganizer(
        await this.organizers.removeMember(this.readers.of(ctx), requireId(input.organizerId, 'Organizer', 'organizerId'), input.username),
      ),
    );
  }
}

@Resolver('OrganizerMember')
export class OrganizerMembersResolver {
  constructor(private readonly readers: GraphqlReaders) {}

  @ResolveField('organizer')
  async organizer(member: GqlMember, _args: unknown, ctx: GraphqlContext) {
    return toGqlOrganizer((await this.readers.of(ctx).organizers.load(member[MODEL].organizerId))!);
  }

  @ResolveField('user')
  async user(member: GqlMember, _args: unknown, ctx: GraphqlContext) {
    return toGqlUser((await this.readers.of(ctx).users.load(member[MODEL].userId))!);
  }
}
