import { Mutation, Query, ResolveField, Resolver } from '@nestjs/graphql';
import DataLoader from 'dataloader';
import { toConnection, toForwardPageRequest } from '../graphql/connection.js';
import { perRequest } from '../graphql/graphql-context.js';
import type { GraphqlContext } from '../graphql/graphql-context.js';
import type * as G from '../generated/graphql-resolvers.js';
import type { FieldResolvers, RootResolvers } from '../graphql/resolver-types.js';
import { toPayload } from '../graphql/payload.js';
import { requireId, toGqlOrganizer } from '../events/events.graphql-mappers.js';
import { MODEL } from '../events/events.graphql-parents.js';
import type { GqlOrganizer } from '../events/events.graphql-parents.js';
import { GraphqlReaders } from '../events/graphql-readers.js';
import { WebhookEndpointsService } from './webhook-endpoints.service.js';
import type { WebhookAttempt, WebhookEndpointChanges, WebhookOwner } from './webhook-endpoints.service.js';
import type { GqlWebhookDelivery, GqlWebhookEndpoint } from './webhooks.graphql-parents.js';
import { fromGqlEventType, toGqlWebhookAttempt, toGqlWebhookDelivery, toGqlWebhookEndpoint } from './webhooks.graphql-mappers.js';
import { WEBHOOK_MODEL } from './webhooks.graphql-parents.js';
import { WebhookError, type WebhookErrorCode } from './webhooks.errors.js';

/** How long a rotated-out secret keeps signing when the caller does not say. */
const DEFAULT_PREVIOUS_SECRET_HOURS = 24;

/** The caller, who must be signed in: anonymous callers reach these fields only through public parents. */
function callerOf(ctx: GraphqlContext): string {
  const userId = ctx.principal?.user?.id;
  if (!userId) throw new WebhookError('FORBIDDEN', 'Sign in to manage webhooks.');
  return userId;
}

@Resolver('WebhookEndpoint')
export class WebhookEndpointsResolver
  implements
    FieldResolvers<G.WebhookEndpointResolvers, G.WebhookEndpoint, GqlWebhookEndpoint, 'organizer' | 'applicationClientId' | 'deliveries'>,
    RootResolvers<G.QueryResolvers, 'webhookEndpoint' | 'applicationWebhookEndpoints'>,
    RootResolvers<
      G.MutationResolvers,
      'createWebhookEndpoint' | 'updateWebhookEndpoint' | 'deleteWebhookEndpoint' | 'rotateWebhookEndpointSecret' | 'sendTestWebhook'
    >
{
  constructor(
    private readonly endpoints: WebhookEndpointsService,
    private readonly readers: GraphqlReaders,
  ) {}

  @Query('webhookEndpoint')
  async webhookEndpoint(_root: unknown, { id }: G.QueryWebhookEndpointArgs, ctx: GraphqlContext): Promise<GqlWebhookEndpoint | null> {
    const endpoint = await this.endpoints.find(callerOf(ctx), id);
    return endpoint && toGqlWebhookEndpoint(endpoint);
  }

  @Query('applicationWebhookEndpoints')
  async applicationWebhookEndpoints(
    _root: unknown,
    { clientId }: G.QueryApplicationWebhookEndpointsArgs,
    ctx: GraphqlContext,
  ): Promise<GqlWebhookEndpoint[]> {
    const userId = callerOf(ctx);
    const owner = await this.endpoints.applicationOwner(userId, clientId);
    return (await this.endpoints.list(userId, owner)).map(toGqlWebhookEndpoint);
  }

  @ResolveField('organizer')
  async organizer(endpoint: GqlWebhookEndpoint, _args: unknown, ctx: GraphqlContext): Promise<GqlOrganizer | null> {
    const { owner } = endpoint[WEBHOOK_MODEL];
    if (owner.kind !== 'organizer') return null;
    const organizer = await this.readers.of(ctx).organizers.load(owner.organizerId);
    return organizer && toGqlOrganizer(organizer);
  }

  @ResolveField('applicationClientId')
  applicationClientId(endpoint: GqlWebhookEndpoint): Promise<string | null> | null {
    const { owner } = endpoint[WEBHOOK_MODEL];
    return owner.kind === 'application' ? this.endpoints.clientIdOf(owner.applicationId) : null;
  }

  @ResolveField('deliveries')
  async deliveries(endpoint: GqlWebhookEndpoint, args: G.WebhookEndpointDeliveriesArgs, ctx: GraphqlContext) {
    const page = await this.endpoints.deliveryPage(callerOf(ctx), endpoint.id, toForwardPageRequest(args));
    return toConnection(page, toGqlWebhookDelivery);
  }

  @Mutation('createWebhookEndpoint')
  async createWebhookEndpoint(_root: unknown, { input }: G.MutationCreateWebhookEndpointArgs, ctx: GraphqlContext) {
    const userId = callerOf(ctx);
    const { created, userErrors } = await toPayload('created', async () => {
      const owner = await this.ownerOf(userId, input);
      return this.endpoints.create(userId, owner, {
        url: input.url,
        eventTypes: input.eventTypes.map(fromGqlEventType),
        ...(input.description != null && { description: input.description }),
      });
    });
    return { webhookEndpoint: created && toGqlWebhookEndpoint(created.endpoint), secret: created?.secret ?? null, userErrors };
  }

  @Mutation('updateWebhookEndpoint')
  updateWebhookEndpoint(_root: unknown, { input }: G.MutationUpdateWebhookEndpointArgs, ctx: GraphqlContext) {
    const changes: WebhookEndpointChanges = {
      ...(input.url != null && { url: input.url }),
      ...(input.eventTypes != null && { eventTypes: input.eventTypes.map(fromGqlEventType) }),
      ...(input.description != null && { description: input.description }),
      ...(input.active != null && { state: input.active ? 'active' : 'paused' }),
    };
    return toPayload('webhookEndpoint', async () => toGqlWebhookEndpoint(await this.endpoints.update(callerOf(ctx), input.id, changes)));
  }

  @Mutation('deleteWebhookEndpoint')
  deleteWebhookEndpoint(_root: unknown, { input }: G.MutationDeleteWebhookEndpointArgs, ctx: GraphqlContext) {
    return toPayload('deletedWebhookEndpointId', async () => {
      await this.endpoints.delete(callerOf(ctx), input.id);
      return input.id;
    });
  }

  @Mutation('rotateWebhookEndpointSecret')
  async rotateWebhookEndpointSecret(_root: unknown, { input }: G.MutationRotateWebhookEndpointSecretArgs, ctx: GraphqlContext) {
    const { rotated, userErrors } = await toPayload('rotated', () =>
      this.endpoints.rotateSecret(callerOf(ctx), input.id, input.previousSecretValidForHours ?? DEFAULT_PREVIOUS_SECRET_HOURS),
    );
    return { webhookEndpoint: rotated && toGqlWebhookEndpoint(rotated.endpoint), secret: rotated?.secret ?? null, userErrors };
  }

  @Mutation('sendTestWebhook')
  sendTestWebhook(_root: unknown, { input }: G.MutationSendTestWebhookArgs, ctx: GraphqlContext) {
    return toPayload('webhookDelivery', async () => {
      try {
        return toGqlWebhookDelivery(await this.endpoints.sendTest(callerOf(ctx), input.webhookEndpointId));
      } catch (err) {
        // The service names the endpoint `id`; this input calls it `webhookEndpointId`.
        if (err instanceof WebhookError && err.field === 'id')
          throw new WebhookError(err.code as WebhookErrorCode, err.message, 'webhookEndpointId');
        throw err;
      }
    });
  }

  /** Exactly one of the organizer (a global ID) and the application (its client ID). */
  private async ownerOf(userId: string, input: G.CreateWebhookEndpointInput): Promise<WebhookOwner> {
    if ((input.organizerId == null) === (input.applicationClientId == null))
      throw new WebhookError('INVALID_OWNER', 'Give the organizer or the application the endpoint is for, one of them.', 'organizerId');
    if (input.organizerId != null) return { kind: 'organizer', organizerId: requireId(input.organizerId, 'Organizer', 'organizerId') };
    return this.endpoints.applicationOwner(userId, input.applicationClientId!, 'applicationClientId');
  }
}

@Resolver('WebhookDelivery')
export class WebhookDeliveriesResolver
  implements
    FieldResolvers<G.WebhookDeliveryResolvers, G.WebhookDelivery, GqlWebhookDelivery, 'attempts'>,
    RootResolvers<G.QueryResolvers, 'webhookDelivery'>,
    RootResolvers<G.MutationResolvers, 'redeliverWebhook'>
{
  constructor(private readonly endpoints: WebhookEndpointsService) {}

  @Query('webhookDelivery')
  async webhookDelivery(_root: unknown, { id }: G.QueryWebhookDeliveryArgs, ctx: GraphqlContext): Promise<GqlWebhookDelivery | null> {
    const found = await this.endpoints.delivery(callerOf(ctx), id);
    return found && toGqlWebhookDelivery(found.delivery);
  }

  // Deliveries reach GraphQL only through an endpoint or a delivery the caller manages.
  @ResolveField('attempts')
  async attempts(delivery: GqlWebhookDelivery, _args: unknown, ctx: GraphqlContext): Promise<G.WebhookAttempt[]> {
    const loader = perRequest(
      ctx,
      'WebhookDelivery.attempts',
      () =>
        new DataLoader<string, WebhookAttempt[]>(async (ids) => {
          const found = await this.endpoints.attemptsOfMany(ids);
          return ids.map((id) => found.get(id) ?? []);
        }),
    );
    return (await loader.load(delivery.id)).map(toGqlWebhookAttempt);
  }

  @Mutation('redeliverWebhook')
  redeliverWebhook(_root: unknown, { input }: G.MutationRedeliverWebhookArgs, ctx: GraphqlContext) {
    return toPayload('webhookDelivery', async () => toGqlWebhookDelivery(await this.endpoints.redeliver(callerOf(ctx), input.deliveryId)));
  }
}

/** `Organizer.webhookEndpoints`: its owners and admins only, FORBIDDEN for others (as `Organizer.members`). */
@Resolver('Organizer')
export class OrganizerWebhooksResolver implements RootResolvers<G.OrganizerResolvers, 'webhookEndpoints'> {
  constructor(private readonly endpoints: WebhookEndpointsService) {}

  @ResolveField('webhookEndpoints')
  async webhookEndpoints(organizer: GqlOrganizer, _args: unknown, ctx: GraphqlContext): Promise<GqlWebhookEndpoint[]> {
    const endpoints = await this.endpoints.list(callerOf(ctx), { kind: 'organizer', organizerId: organizer[MODEL].id });
    return endpoints.map(toGqlWebhookEndpoint);
  }
}
