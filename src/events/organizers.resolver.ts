import { personOf } from '../auth/principal.js';
import { Mutation, Query, ResolveField, Resolver } from '@nestjs/graphql';
import { Public } from '../auth/public.decorator.js';
import { toConnection, toPageRequest } from '../graphql/connection.js';
import type { GraphqlContext } from '../graphql/graphql-context.js';
import type * as G from '../generated/graphql-resolvers.js';
import type { FieldResolvers, RootResolvers } from '../graphql/resolver-types.js';
import { toPayload } from '../graphql/payload.js';
import type { UserProfile } from '../users/user.model.js';
import { lower, requireId, toGqlEventConnection, toGqlMember, toGqlOrganizer } from './events.graphql-mappers.js';
import { MODEL } from './events.graphql-parents.js';
import type { GqlEventConnection, GqlMember, GqlOrganizer } from './events.graphql-parents.js';
import type { OrganizerRoleValue } from './events.model.js';
import { EventsService } from './events.service.js';
import { GraphqlReaders } from './graphql-readers.js';
import { OrganizersService } from './organizers.service.js';

@Resolver('Organizer')
export class OrganizersResolver
  implements
    FieldResolvers<
      G.OrganizerResolvers,
      G.Organizer,
      GqlOrganizer,
      'viewerRole' | 'viewerSecondFactorDeadline' | 'events' | 'members' | 'webhookEndpoints' | 'serviceAccounts'
    >,
    RootResolvers<G.QueryResolvers, 'organizer'>,
    RootResolvers<
      G.MutationResolvers,
      'createOrganizer' | 'updateOrganizer' | 'addOrganizerMember' | 'updateOrganizerMember' | 'removeOrganizerMember'
    >
{
  constructor(
    private readonly organizersService: OrganizersService,
    private readonly eventsService: EventsService,
    private readonly readers: GraphqlReaders,
  ) {}

  // Resolved by the webhooks feature, which owns endpoints (OrganizerWebhooksResolver).
  declare webhookEndpoints: NonNullable<G.OrganizerResolvers['webhookEndpoints']>;
  // Resolved beside the service accounts' mutations (ServiceAccountsResolver).
  declare serviceAccounts: NonNullable<G.OrganizerResolvers['serviceAccounts']>;

  @Query('organizer')
  @Public()
  async organizer(_root: unknown, { slug }: G.QueryOrganizerArgs, ctx: GraphqlContext): Promise<GqlOrganizer | null> {
    const organizer = await this.organizersService.findBySlug(slug);
    if (organizer) this.readers.of(ctx).organizers.prime(organizer.id, organizer);
    return organizer ? toGqlOrganizer(organizer) : null;
  }

  @ResolveField('viewerRole')
  async viewerRole(organizer: GqlOrganizer, _args: unknown, ctx: GraphqlContext): Promise<G.OrganizerRole | null> {
    const role = await this.readers.of(ctx).role(organizer[MODEL].id);
    // A service account is no member of the team: it has no role to show.
    return role && role !== 'service_account' ? (role.toUpperCase() as G.OrganizerRole) : null;
  }

  @ResolveField('viewerSecondFactorDeadline')
  viewerSecondFactorDeadline(organizer: GqlOrganizer, _args: unknown, ctx: GraphqlContext): Promise<Date | null> {
    return this.organizersService.secondFactorDeadline(this.readers.of(ctx), organizer[MODEL].id);
  }

  @ResolveField('events')
  async events(organizer: GqlOrganizer, args: G.OrganizerEventsArgs, ctx: GraphqlContext): Promise<GqlEventConnection> {
    const { page, totalCount } = await this.eventsService.listOfOrganizer(
      this.readers.of(ctx),
      organizer[MODEL].id,
      args.orderBy?.direction ?? 'ASC',
      toPageRequest(args),
    );
    return toGqlEventConnection(page, totalCount);
  }

  @ResolveField('members')
  async members(organizer: GqlOrganizer, args: G.OrganizerMembersArgs, ctx: GraphqlContext) {
    const organizerId = organizer[MODEL].id;
    await this.organizersService.requireCanSeeTeam(this.readers.of(ctx), organizerId);
    const page = await this.readers.page(ctx, 'Organizer.members', args, organizerId, (ids) =>
      this.organizersService.membersPages(ids, toPageRequest(args)),
    );
    return toConnection(page, toGqlMember);
  }

  @Mutation('createOrganizer')
  createOrganizer(_root: unknown, { input }: G.MutationCreateOrganizerArgs, ctx: GraphqlContext) {
    return toPayload('organizer', async () => toGqlOrganizer(await this.organizersService.create(personOf(ctx.principal!).id, input)));
  }

  @Mutation('updateOrganizer')
  updateOrganizer(_root: unknown, { input }: G.MutationUpdateOrganizerArgs, ctx: GraphqlContext) {
    return toPayload('organizer', async () =>
      toGqlOrganizer(
        await this.organizersService.update(this.readers.of(ctx), requireId(input.organizerId, 'Organizer', 'organizerId'), input),
      ),
    );
  }

  @Mutation('addOrganizerMember')
  addOrganizerMember(_root: unknown, { input }: G.MutationAddOrganizerMemberArgs, ctx: GraphqlContext) {
    return toPayload('member', async () =>
      toGqlMember(
        await this.organizersService.addMember(
          this.readers.of(ctx),
          requireId(input.organizerId, 'Organizer', 'organizerId'),
          input.username,
          lower<OrganizerRoleValue>(input.role),
        ),
      ),
    );
  }

  @Mutation('updateOrganizerMember')
  updateOrganizerMember(_root: unknown, { input }: G.MutationUpdateOrganizerMemberArgs, ctx: GraphqlContext) {
    return toPayload('member', async () =>
      toGqlMember(
        await this.organizersService.updateMember(
          this.readers.of(ctx),
          requireId(input.organizerId, 'Organizer', 'organizerId'),
          input.username,
          lower<OrganizerRoleValue>(input.role),
        ),
      ),
    );
  }

  @Mutation('removeOrganizerMember')
  removeOrganizerMember(_root: unknown, { input }: G.MutationRemoveOrganizerMemberArgs, ctx: GraphqlContext) {
    return toPayload('organizer', async () =>
      toGqlOrganizer(
        await this.organizersService.removeMember(
          this.readers.of(ctx),
          requireId(input.organizerId, 'Organizer', 'organizerId'),
          input.username,
        ),
      ),
    );
  }
}

@Resolver('OrganizerMember')
export class OrganizerMembersResolver implements FieldResolvers<
  G.OrganizerMemberResolvers,
  G.OrganizerMember,
  GqlMember,
  'organizer' | 'user'
> {
  constructor(private readonly readers: GraphqlReaders) {}

  @ResolveField('organizer')
  async organizer(member: GqlMember, _args: unknown, ctx: GraphqlContext): Promise<GqlOrganizer> {
    return toGqlOrganizer((await this.readers.of(ctx).organizers.load(member[MODEL].organizerId))!);
  }

  @ResolveField('user')
  async user(member: GqlMember, _args: unknown, ctx: GraphqlContext): Promise<UserProfile> {
    return (await this.readers.of(ctx).users.load(member[MODEL].userId))!;
  }
}
