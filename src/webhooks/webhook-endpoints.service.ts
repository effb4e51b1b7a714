import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource, EntityManager, In } from 'typeorm';
import { Clock } from '../clock/clock.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { EntityTable } from '../database/entity-table.js';
import type { Page, PageRequest, SortKey } from '../database/keyset.js';
import { KeysetPager } from '../database/keyset-pager.js';
import { isUuid } from '../database/uuid.js';
import { checkAll, DomainError } from '../errors/domain-error.js';
import { DomainEventType, isDomainEventType } from '../events/domain-events.js';
import { EventsPolicy } from '../events/events.policy.js';
import { EventsReaderFactory } from '../events/events.reader.js';
import { OrganizersService } from '../events/organizers.service.js';
import { ApplicationsService } from '../oauth/clients/applications.service.js';
import { RateLimits } from '../rate-limits/rate-limits.service.js';
import { UsersService } from '../users/users.service.js';
import { MAX_URL_LENGTH, resolvesName, targetProblem, TargetPolicy, urlProblem, urlShapeProblem } from '../outbound/outbound.js';
import { WebhookAttemptEntity } from './webhook-attempt.entity.js';
import { WebhookDeliveryEntity } from './webhook-delivery.entity.js';
import { WebhookDispatch } from './webhook-dispatch.js';
import { WebhookEndpointEntity } from './webhook-endpoint.entity.js';
import { WebhookMessageEntity } from './webhook-message.entity.js';
import { newWebhookSecret, sealWebhookSecret } from './webhook-secrets.js';
import type { WebhookAttemptTrigger, WebhookDeliveryState, WebhookEndpointState } from './webhook-states.js';
import { WebhookError } from './webhooks.errors.js';

/** Whose endpoint it is: an organizer's (its owners and admins manage it) or an application's (its owner manages it). */
export type WebhookOwner = { kind: 'organizer'; organizerId: string } | { kind: 'application'; applicationId: string };

export interface WebhookEndpoint {
  id: string;
  owner: WebhookOwner;
  url: string;
  description: string;
  eventTypes: DomainEventType[];
  state: WebhookEndpointState;
  disabledReason: string | null;
  disabledAt: Date | null;
  /** During a secret rotation: when the previous secret stops signing; null otherwise. */
  previousSecretExpiresAt: Date | null;
  failingSince: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface WebhookEndpointInput {
  url: string;
  eventTypes: DomainEventType[];
  description?: string;
}

export interface WebhookEndpointChanges {
  url?: string;
  eventTypes?: DomainEventType[];
  description?: string;
  /** 'active' also re-enables an endpoint the service disabled. */
  state?: 'active' | 'paused';
}

export interface WebhookDelivery {
  id: string;
  endpointId: string;
  /** The `webhook-id` header: `msg_` and the message's id, the same on every attempt and every endpoint. */
  webhookId: string;
  /** A domain event type, or `webhook.test`. */
  eventType: string;
  state: WebhookDeliveryState;
  attempts: number;
  nextAttemptAt: Date | null;
  lastAttemptAt: Date | null;
  createdAt: Date;
  /** The exact request body sent. */
  requestBody: string;
}

export interface WebhookAttempt {
  number: number;
  trigger: WebhookAttemptTrigger;
  startedAt: Date;
  durationMs: number;
  outcome: 'succeeded' | 'failed';
  responseStatus: number | null;
  responseBody: string | null;
  error: string | null;
}

export interface DeliveryPage {
  items: WebhookDelivery[];
  hasNextPage: boolean;
  endCursor: string | null;
}

/** The most endpoints one organizer or application may have. */
export const MAX_ENDPOINTS_PER_OWNER = 20;
export const MAX_DESCRIPTION_LENGTH = 500;
/** The longest a previous secret may keep signing after a rotation: a week. */
export const MAX_PREVIOUS_SECRET_HOURS = 168;
/** Test events, and redeliveries, each at most this many a minute per endpoint. */
export const MANUAL_ATTEMPTS_PER_MINUTE = 10;
/** URLs whose name is resolved to check it, at most this many a minute per user: the form is no way to flood the resolver. */
export const URL_CHECKS_PER_MINUTE = 30;

/** An endpoint's deliveries, newest first. */
const DELIVERY_LOG: SortKey = {
  list: 'WebhookEndpoint.deliveries',
  columns: [
    { sql: 'd.created_at', type: 'timestamptz' },
    { sql: 'd.id', type: 'uuid' },
  ],
  direction: 'DESC',
};

type DeliveryColumns = Pick<
  WebhookDeliveryEntity,
  'id' | 'endpointId' | 'messageId' | 'state' | 'attempts' | 'nextAttemptAt' | 'lastAttemptAt' | 'createdAt'
>;
type AttemptColumns = Pick<
  WebhookAttemptEntity,
  'deliveryId' | 'number' | 'trigger' | 'startedAt' | 'durationMs' | 'outcome' | 'responseStatus' | 'responseBody' | 'error'
>;

/** Managing endpoints, as their owners do through GraphQL and the dashboard. Every method checks the user may. */
@Injectable()
export class WebhookEndpointsService {
  private readonly policy: TargetPolicy;
  /** What the delivery log reads of a delivery (`d`) and of its message (`m`): columns and mappers from the entities. */
  private readonly deliveryColumns: EntityTable<DeliveryColumns, WebhookDeliveryEntity>;
  private readonly messageColumns: EntityTable<Pick<WebhookMessageEntity, 'eventType' | 'body'>, WebhookMessageEntity>;
  private readonly deliverySelect: string;
  private readonly deliveryFrom: string;
  /** What the log shows of an attempt. */
  private readonly attemptColumns: EntityTable<AttemptColumns, WebhookAttemptEntity>;
  private readonly attemptsSql: string;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly clock: Clock,
    private readonly readers: EventsReaderFactory,
    private readonly users: UsersService,
    private readonly rateLimits: RateLimits,
    private readonly pages: KeysetPager,
    private readonly dispatch: WebhookDispatch,
    private readonly applications: ApplicationsService,
    private readonly organizers: OrganizersService,
  ) {
    this.policy = { allowHttp: config.webhooks.allowHttp, allowPrivateTargets: config.webhooks.allowPrivateTargets };
    const deliveries = EntityTable.of(dataSource, WebhookDeliveryEntity, 'd');
    const messages = EntityTable.of(dataSource, WebhookMessageEntity, 'm');
    this.deliveryColumns = deliveries.pick(
      'id',
      'endpointId',
      'messageId',
      'state',
      'attempts',
      'nextAttemptAt',
      'lastAttemptAt',
      'createdAt',
    );
    this.messageColumns = messages.pick('eventType', 'body');
    this.deliverySelect = `${this.deliveryColumns.select}, ${this.messageColumns.select}`;
    this.deliveryFrom = `${deliveries.name} d JOIN ${messages.name} m ON m.${messages.column('id')} = d.${deliveries.column('messageId')}`;
    const attempts = EntityTable.of(dataSource, WebhookAttemptEntity, 't');
    this.attemptColumns = attempts.pick(
      'deliveryId',
      'number',
      'trigger',
      'startedAt',
      'durationMs',
      'outcome',
      'responseStatus',
      'responseBody',
      'error',
    );
    const deliveryId = attempts.column('deliveryId');
    this.attemptsSql = `SELECT ${this.attemptColumns.select} FROM ${attempts.name} t
      WHERE t.${deliveryId} = ANY($1) ORDER BY t.${deliveryId}, t.${attempts.column('number')}`;
  }

  /** The endpoints of one owner the user manages (WebhookError FORBIDDEN / NOT_FOUND otherwise), oldest first. */
  async list(userId: string, owner: WebhookOwner): Promise<WebhookEndpoint[]> {
    await this.requireManager(userId, owner);
    const where = owner.kind === 'organizer' ? { organizerId: owner.organizerId } : { applicationId: owner.applicationId };
    return (await this.endpoints().find({ where, order: { createdAt: 'ASC', id: 'ASC' } })).map(toEndpoint);
  }

  /** Every endpoint the user manages, with the owners they could add one to (the dashboard's list). */
  async overview(userId: string): Promise<{
    owners: { owner: WebhookOwner; name: string }[];
    endpoints: WebhookEndpoint[];
  }> {
    const organizers = await this.organizers.managedBy(userId);
    const applications = await this.applications.namesOwnedBy(userId);
    const rows = [
      ...organizers.map((o) => ({ kind: 'organizer' as const, ...o })),
      ...applications.map((a) => ({ kind: 'application' as const, ...a })),
    ];
    const reader = this.readers.create(userId);
    // One statement for every organizer's role (the reader batches them).
    const roles = await Promise.all(rows.map((row) => (row.kind === 'organizer' ? reader.role(row.id) : null)));
    const owners = rows.flatMap((row, i): { owner: WebhookOwner; name: string }[] => {
      if (row.kind === 'application') return [{ owner: { kind: 'application', applicationId: row.id }, name: row.name }];
      // A member held back by the organizer's second-factor requirement manages nothing of it.
      return EventsPolicy.canManage(roles[i] ?? null) ? [{ owner: { kind: 'organizer', organizerId: row.id }, name: row.name }] : [];
    });
    const organizerIds = owners.flatMap((o) => (o.owner.kind === 'organizer' ? [o.owner.organizerId] : []));
    const applicationIds = owners.flatMap((o) => (o.owner.kind === 'application' ? [o.owner.applicationId] : []));
    const where = [
      ...(organizerIds.length ? [{ organizerId: In(organizerIds) }] : []),
      ...(applicationIds.length ? [{ applicationId: In(applicationIds) }] : []),
    ];
    const entities = where.length ? await this.endpoints().find({ where, order: { createdAt: 'ASC', id: 'ASC' } }) : [];
    return { owners, endpoints: entities.map(toEndpoint) };
  }

  /** One endpoint, or null when it does not exist or the user does not manage it. */
  async find(userId: string, endpointId: string): Promise<WebhookEndpoint | null> {
    const entity = await this.findManaged(userId, endpointId);
    return entity && toEndpoint(entity);
  }

  /**
   * Registers an endpoint; the `whsec_` secret is returned here only. Needs a verified e-mail address;
   * the URL is checked as written (INVALID_URL) and then resolved (TARGET_NOT_ALLOWED) before it is
   * saved; at most 20 endpoints per owner (TOO_MANY_ENDPOINTS, counted under the owner's row lock).
   */
  async create(userId: string, owner: WebhookOwner, input: WebhookEndpointInput): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
    await this.requireManager(userId, owner);
    try {
      await this.users.requireVerifiedEmail(userId);
    } catch (err) {
      if (err instanceof DomainError && err.code === 'EMAIL_NOT_VERIFIED') throw new WebhookError('EMAIL_NOT_VERIFIED', err.message);
      throw err;
    }
    const values = checkAll({
      url: () => this.checkUrl(input.url),
      eventTypes: () => checkEventTypes(input.eventTypes),
      description: () => checkDescription(input.description ?? ''),
    });
    await this.checkTarget(userId, values.url);
    const secret = newWebhookSecret();
    const now = this.clock.now();
    const entity = await this.dataSource.transaction(async (tx) => {
      await this.lockOwner(tx, owner);
      const [{ n }] = (await tx.query(`SELECT count(*)::int AS n FROM webhook_endpoints WHERE ${ownerColumn(owner)} = $1`, [
        ownerIdOf(owner),
      ])) as [{ n: number }];
      if (n >= MAX_ENDPOINTS_PER_OWNER)
        throw new WebhookError(
          'TOO_MANY_ENDPOINTS',
          `An ${owner.kind} has at most ${MAX_ENDPOINTS_PER_OWNER} webhook endpoints: delete one first.`,
          // An application is named differently by each edge (client ID in GraphQL): no field.
          owner.kind === 'organizer' ? 'organizerId' : undefined,
        );
      const created = tx.getRepository(WebhookEndpointEntity).create({
        id: randomUUID(),
        organizerId: owner.kind === 'organizer' ? owner.organizerId : null,
        applicationId: owner.kind === 'application' ? owner.applicationId : null,
        url: values.url,
        description: values.description,
        eventTypes: values.eventTypes,
        state: 'active',
        disabledReason: null,
        disabledAt: null,
        secretSealed: this.seal(secret),
        previousSecretSealed: null,
        previousSecretExpiresAt: null,
        failingSince: null,
        createdBy: userId,
        createdAt: now,
        updatedAt: now,
      });
      return tx.getRepository(WebhookEndpointEntity).save(created);
    });
    return { endpoint: toEndpoint(entity), secret };
  }

  /**
   * Changes what is given. A new URL is checked like a new endpoint's. `state` 'active' resumes a
   * paused endpoint or re-enables one the service disabled (its failure streak forgotten); 'paused'
   * stops new deliveries to it.
   */
  async update(userId: string, endpointId: string, changes: WebhookEndpointChanges): Promise<WebhookEndpoint> {
    const current = await this.requireManaged(userId, endpointId);
    const values = checkAll({
      url: () => (changes.url === undefined ? undefined : this.checkUrl(changes.url)),
      eventTypes: () => (changes.eventTypes === undefined ? undefined : checkEventTypes(changes.eventTypes)),
      description: () => (changes.description === undefined ? undefined : checkDescription(changes.description)),
    });
    if (values.url !== undefined && values.url !== current.url) await this.checkTarget(userId, values.url);
    const set: Partial<WebhookEndpointEntity> = { updatedAt: this.clock.now() };
    if (values.url !== undefined) set.url = values.url;
    if (values.eventTypes !== undefined) set.eventTypes = values.eventTypes;
    if (values.description !== undefined) set.description = values.description;
    if (changes.state !== undefined && changes.state !== current.state) {
      set.state = changes.state;
      set.disabledReason = null;
      set.disabledAt = null;
      set.failingSince = null;
    }
    await this.endpoints().update({ id: endpointId }, set);
    const updated = await this.endpoints().findOneBy({ id: endpointId });
    if (!updated) throw WebhookError.notFound('endpoint', 'id');
    return toEndpoint(updated);
  }

  /**
   * Deletes the endpoint with its delivery log; deliveries not yet made are dropped. The endpoint's row is
   * locked first, as an attempt recording its outcome locks it (then its delivery): the same order, so
   * the cascade to the deliveries never deadlocks with an attempt.
   */
  async delete(userId: string, endpointId: string): Promise<void> {
    await this.requireManaged(userId, endpointId);
    await this.dataSource.transaction(async (tx) => {
      await tx.query(`SELECT 1 FROM webhook_endpoints WHERE id = $1 FOR UPDATE`, [endpointId]);
      await tx.query(`DELETE FROM webhook_endpoints WHERE id = $1`, [endpointId]);
    });
  }

  /**
   * A new secret, returned here only; the previous one keeps signing beside it for `previousValidForHours`
   * (0: stops now). One statement reads the current secret and replaces it, so two rotations at once
   * cannot keep a secret that was never current; a rotation during another's window ends the older
   * previous secret at once.
   */
  async rotateSecret(
    userId: string,
    endpointId: string,
    previousValidForHours: number,
  ): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
    await this.requireManaged(userId, endpointId);
    if (!Number.isInteger(previousValidForHours) || previousValidForHours < 0 || previousValidForHours > MAX_PREVIOUS_SECRET_HOURS)
      throw new WebhookError(
        'INVALID_ROTATION',
        `The previous secret may keep signing for 0 to ${MAX_PREVIOUS_SECRET_HOURS} hours (a whole number).`,
        'previousSecretValidForHours',
      );
    const secret = newWebhookSecret();
    const now = this.clock.now();
    const keep = previousValidForHours > 0;
    const rows = (await this.dataSource.query(
      `WITH rotated AS (
         UPDATE webhook_endpoints
            SET previous_secret_sealed = CASE WHEN $3::boolean THEN secret_sealed END, secret_sealed = $2,
                previous_secret_expires_at = $4, updated_at = $5
          WHERE id = $1
          RETURNING id)
       SELECT id FROM rotated`,
      [endpointId, this.seal(secret), keep, keep ? new Date(now.getTime() + previousValidForHours * 3600_000) : null, now],
    )) as { id: string }[];
    const updated = rows.length ? await this.endpoints().findOneBy({ id: endpointId }) : null;
    if (!updated) throw WebhookError.notFound('endpoint', 'id');
    return { endpoint: toEndpoint(updated), secret };
  }

  /** Sends a `webhook.test` message to this endpoint now (throttled: RATE_LIMITED), whatever its state. */
  async sendTest(userId: string, endpointId: string): Promise<WebhookDelivery> {
    await this.requireManaged(userId, endpointId);
    await this.throttle('webhook-test', endpointId, 'test events');
    const deliveryId = await this.dispatch.sendTest(endpointId);
    return (await this.loadDelivery(deliveryId))!;
  }

  /** The endpoint's deliveries, newest first. */
  async deliveries(userId: string, endpointId: string, page: { first: number; after?: string }): Promise<DeliveryPage> {
    const found = await this.deliveryPage(userId, endpointId, page);
    return { items: found.items.map((item) => item.node), hasNextPage: found.hasNextPage, endCursor: found.items.at(-1)?.cursor ?? null };
  }

  /** The endpoint's deliveries as a keyset page (1 to 100, newest first), each with its cursor: GraphQL's connection. */
  async deliveryPage(userId: string, endpointId: string, request: PageRequest): Promise<Page<WebhookDelivery>> {
    await this.requireManaged(userId, endpointId);
    return this.pages.page(
      { select: this.deliverySelect, from: this.deliveryFrom, where: ['d.endpoint_id = $1'], params: [endpointId] },
      DELIVERY_LOG,
      request,
      (row) => this.toDelivery(row),
    );
  }

  /** One delivery with every attempt, or null. */
  async delivery(userId: string, deliveryId: string): Promise<{ delivery: WebhookDelivery; attempts: WebhookAttempt[] } | null> {
    const delivery = await this.findManagedDelivery(userId, deliveryId);
    if (!delivery) return null;
    return { delivery, attempts: await this.attemptsOf(delivery.id) };
  }

  /** The attempts of a delivery, first first. Callers check the user manages its endpoint. */
  async attemptsOf(deliveryId: string): Promise<WebhookAttempt[]> {
    return (await this.attemptsOfMany([deliveryId])).get(deliveryId)!;
  }

  /** The attempts of several deliveries in one statement, each first first. Callers check the user manages their endpoints. */
  async attemptsOfMany(deliveryIds: readonly string[]): Promise<Map<string, WebhookAttempt[]>> {
    const rows = (await this.dataSource.query(this.attemptsSql, [deliveryIds])) as object[];
    const byDelivery = new Map<string, WebhookAttempt[]>(deliveryIds.map((id) => [id, []]));
    for (const row of rows) {
      const attempt = this.attemptColumns.map(row);
      byDelivery.get(attempt.deliveryId)?.push(toAttempt(attempt));
    }
    return byDelivery;
  }

  /** One more attempt of this delivery, now (throttled: RATE_LIMITED). */
  async redeliver(userId: string, deliveryId: string): Promise<WebhookDelivery> {
    const delivery = await this.findManagedDelivery(userId, deliveryId);
    if (!delivery) throw WebhookError.notFound('delivery', 'deliveryId');
    await this.throttle('webhook-redeliver', delivery.endpointId, 'redeliveries');
    await this.dispatch.redeliver(deliveryId);
    return (await this.loadDelivery(deliveryId))!;
  }

  /** The owner an application's client ID names, if the user owns that application (NOT_FOUND otherwise). */
  async applicationOwner(userId: string, clientId: string, field = 'clientId'): Promise<WebhookOwner> {
    const application = await this.applications.ownership({ clientId });
    if (!application || application.ownerId !== userId) throw WebhookError.notFound('application', field);
    return { kind: 'application', applicationId: application.id };
  }

  /** The client ID of an application (GraphQL shows application endpoints' owner by it). */
  async clientIdOf(applicationId: string): Promise<string | null> {
    return (await this.applications.ownership({ id: applicationId }))?.clientId ?? null;
  }

  /**
   * Refuses a user who may not manage the owner's endpoints: an organizer's owners and admins (not its
   * check-in staff; a member held back by a second-factor requirement is told why), an application's
   * owner (anyone else is told it does not exist).
   */
  async requireManager(userId: string, owner: WebhookOwner): Promise<void> {
    if (owner.kind === 'application') {
      const application = await this.applications.ownership({ id: owner.applicationId });
      if (!application || application.ownerId !== userId) throw WebhookError.notFound('application', 'applicationId');
      return;
    }
    const reader = this.readers.create(userId);
    const organizer = await reader.organizers.load(owner.organizerId);
    if (!organizer) throw WebhookError.notFound('organizer', 'organizerId');
    if (EventsPolicy.canManage(await reader.role(owner.organizerId))) return;
    const refusal = await reader.refusal(owner.organizerId, "manage this organizer's webhooks");
    if (refusal.code === 'SECOND_FACTOR_REQUIRED') throw refusal;
    throw new WebhookError('FORBIDDEN', "Only the organizer's owners and admins manage its webhooks.");
  }

  private async findManaged(userId: string, endpointId: string): Promise<WebhookEndpointEntity | null> {
    if (!isUuid(endpointId)) return null;
    const entity = await this.endpoints().findOneBy({ id: endpointId });
    if (!entity) return null;
    try {
      await this.requireManager(userId, ownerOf(entity));
    } catch (err) {
      if (err instanceof DomainError && (err.kind === 'forbidden' || err.kind === 'not_found')) return null;
      throw err;
    }
    return entity;
  }

  private async requireManaged(userId: string, endpointId: string): Promise<WebhookEndpointEntity> {
    const entity = await this.findManaged(userId, endpointId);
    if (!entity) throw WebhookError.notFound('endpoint', 'id');
    return entity;
  }

  private async findManagedDelivery(userId: string, deliveryId: string): Promise<WebhookDelivery | null> {
    const delivery = await this.loadDelivery(deliveryId);
    return delivery && (await this.findManaged(userId, delivery.endpointId)) ? delivery : null;
  }

  private async loadDelivery(deliveryId: string): Promise<WebhookDelivery | null> {
    if (!isUuid(deliveryId)) return null;
    const [row] = (await this.dataSource.query(`SELECT ${this.deliverySelect} FROM ${this.deliveryFrom} WHERE d.id = $1`, [
      deliveryId,
    ])) as object[];
    return row ? this.toDelivery(row) : null;
  }

  /** A row of the delivery log (`deliverySelect`) as the API's delivery. */
  private toDelivery(row: object): WebhookDelivery {
    const delivery = this.deliveryColumns.map(row);
    const message = this.messageColumns.map(row);
    return {
      id: delivery.id,
      endpointId: delivery.endpointId,
      webhookId: `msg_${delivery.messageId}`,
      eventType: message.eventType,
      state: delivery.state,
      attempts: delivery.attempts,
      nextAttemptAt: delivery.nextAttemptAt ?? null,
      lastAttemptAt: delivery.lastAttemptAt ?? null,
      createdAt: delivery.createdAt,
      requestBody: message.body,
    };
  }

  private async throttle(name: string, endpointId: string, what: string): Promise<void> {
    const retryAfter = await this.rateLimits.throttle(name, endpointId, MANUAL_ATTEMPTS_PER_MINUTE, 60);
    if (retryAfter > 0)
      throw new WebhookError(
        'RATE_LIMITED',
        `At most ${MANUAL_ATTEMPTS_PER_MINUTE} ${what} a minute per endpoint: try again in ${retryAfter} seconds.`,
      );
  }

  /**
   * The URL as it will be stored, or INVALID_URL (malformed, not allowed as written) / TARGET_NOT_ALLOWED
   * (a non-public literal target). Stored as the URL parser writes it (`href`): tabs and line breaks,
   * which the parser drops, never reach GraphQL, the pages or a mail's Subject.
   */
  private checkUrl(raw: string): string {
    const url = raw.trim();
    if (url.length === 0) throw new WebhookError('INVALID_URL', 'Give the URL the deliveries are POSTed to.', 'url');
    if (url.length > MAX_URL_LENGTH) throw new WebhookError('INVALID_URL', `A URL has at most ${MAX_URL_LENGTH} characters.`, 'url');
    // First what is wrong whatever the operator allows, then what the operator does not allow.
    const malformed = urlShapeProblem(url, this.policy);
    if (malformed) throw new WebhookError('INVALID_URL', sentence(malformed), 'url');
    const refused = urlProblem(url, this.policy);
    if (refused) throw new WebhookError('TARGET_NOT_ALLOWED', sentence(`${refused}: webhooks go to public addresses only`), 'url');
    const normalized = new URL(url).href;
    if (normalized.length > MAX_URL_LENGTH) throw new WebhookError('INVALID_URL', `A URL has at most ${MAX_URL_LENGTH} characters.`, 'url');
    return normalized;
  }

  /**
   * The name resolved: every address it has must be public (unless the operator allows private targets).
   * URLs whose check resolves a name are throttled per user (RATE_LIMITED).
   */
  private async checkTarget(userId: string, url: string): Promise<void> {
    if (resolvesName(url, this.policy)) {
      const retryAfter = await this.rateLimits.throttle('webhook-url-check', userId, URL_CHECKS_PER_MINUTE, 60);
      if (retryAfter > 0)
        throw new WebhookError(
          'RATE_LIMITED',
          `At most ${URL_CHECKS_PER_MINUTE} endpoint addresses with a host name checked a minute: try again in ${retryAfter} seconds.`,
        );
    }
    const problem = await targetProblem(url, this.policy);
    if (problem) throw new WebhookError('TARGET_NOT_ALLOWED', sentence(`${problem}: webhooks go to public addresses only`), 'url');
  }

  private async lockOwner(tx: EntityManager, owner: WebhookOwner): Promise<void> {
    if (owner.kind === 'application') return this.applications.lockRow(tx, owner.applicationId);
    await this.organizers.lockRow(tx, owner.organizerId);
  }

  private seal(secret: string): string {
    return sealWebhookSecret(this.config.secretKey!, secret);
  }

  private endpoints() {
    return this.dataSource.getRepository(WebhookEndpointEntity);
  }
}

/** The outbound checks' words ("the URL must start with https://") as a sentence of an error. */
function sentence(problem: string): string {
  return `${problem[0]!.toUpperCase()}${problem.slice(1)}.`;
}

function checkEventTypes(types: readonly string[]): DomainEventType[] {
  if (types.length === 0) throw new WebhookError('INVALID_EVENT_TYPES', 'Choose at least one event type.', 'eventTypes');
  const unknown = types.filter((type) => !isDomainEventType(type));
  if (unknown.length > 0)
    throw new WebhookError(
      'INVALID_EVENT_TYPES',
      `Unknown event type${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}.`,
      'eventTypes',
    );
  return [...new Set(types as DomainEventType[])];
}

function checkDescription(raw: string): string {
  const description = raw.trim();
  if (description.length > MAX_DESCRIPTION_LENGTH)
    throw new WebhookError('INVALID_DESCRIPTION', `A description has at most ${MAX_DESCRIPTION_LENGTH} characters.`, 'description');
  return description;
}

const ownerIdOf = (owner: WebhookOwner): string => (owner.kind === 'organizer' ? owner.organizerId : owner.applicationId);
const ownerColumn = (owner: WebhookOwner): string => (owner.kind === 'organizer' ? 'organizer_id' : 'application_id');

function ownerOf(entity: Pick<WebhookEndpointEntity, 'organizerId' | 'applicationId'>): WebhookOwner {
  return entity.organizerId
    ? { kind: 'organizer', organizerId: entity.organizerId }
    : { kind: 'application', applicationId: entity.applicationId! };
}

function toEndpoint(entity: WebhookEndpointEntity): WebhookEndpoint {
  return {
    id: entity.id,
    owner: ownerOf(entity),
    url: entity.url,
    description: entity.description,
    eventTypes: entity.eventTypes.filter(isDomainEventType),
    state: entity.state,
    disabledReason: entity.disabledReason,
    disabledAt: entity.disabledAt,
    previousSecretExpiresAt: entity.previousSecretExpiresAt,
    failingSince: entity.failingSince,
    createdAt: entity.createdAt,
    updatedAt: entity.updatedAt,
  };
}

function toAttempt(row: AttemptColumns): WebhookAttempt {
  return {
    number: row.number,
    trigger: row.trigger,
    startedAt: row.startedAt,
    durationMs: row.durationMs,
    outcome: row.outcome,
    responseStatus: row.responseStatus ?? null,
    responseBody: row.responseBody ?? null,
    error: row.error ?? null,
  };
}
