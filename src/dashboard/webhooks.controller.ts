import { Body, Controller, Get, Inject, Param, Post, Query } from '@nestjs/common';
import type { SafeHtml } from '../web/html.js';
import { renderDoc } from './markdown-doc.js';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Clock } from '../clock/clock.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { projectRoot } from '../config/project-root.js';
import { isUuid } from '../database/uuid.js';
import { DomainError } from '../errors/domain-error.js';
import type { DomainEventType } from '../events/domain-events.js';
import type { SignedInUser } from '../web/page-sessions.js';
import {
  type WebhookEndpoint,
  type WebhookEndpointInput,
  WebhookEndpointsService,
  type WebhookOwner,
} from '../webhooks/webhook-endpoints.service.js';
import { fieldErrors, formList, formText } from '../web/form-values.js';
import type { PageResult } from '../web/page-result.js';
import { seeOther, view } from '../web/page-result.js';
import { AnonymousPage, CurrentSession, Pages, SignedIn } from '../web/pages.decorator.js';
import { DELIVERIES_PER_PAGE, deliveryLog, deliveryPage } from './webhooks.log.pages.js';
import type { EndpointFormValues, NamedOwner } from './webhooks.parts.js';
import { ownerKey } from './webhooks.parts.js';
import {
  confirmDeleteEndpointPage,
  endpointPage,
  guidePage,
  newEndpointPage,
  ROTATION_CHOICES,
  rotateSecretPage,
  webhooksPage,
} from './webhooks.pages.js';

/** Another user's endpoint or delivery, or none at all: the same 404 page, so existence never shows. */
const notFound = () => new DomainError('not_found', 'NOT_FOUND', 'No such webhook endpoint');

function endpointInput(body: Record<string, unknown>): WebhookEndpointInput & EndpointFormValues {
  return {
    url: formText(body.url).trim(),
    description: formText(body.description),
    // Unknown types go to the service as typed, which refuses them (INVALID_EVENT_TYPES) beside the field.
    eventTypes: formList(body.event_types) as DomainEventType[],
  };
}

/** The owner a form or a query string names (`organizer=<id>` or `application=<id>`), or null. */
function ownerOf(values: Record<string, unknown>): WebhookOwner | null {
  const organizer = formText(values.organizer);
  const application = formText(values.application);
  if (organizer && !application && isUuid(organizer)) return { kind: 'organizer', organizerId: organizer };
  if (application && !organizer && isUuid(application)) return { kind: 'application', applicationId: application };
  return null;
}

const isInvalidInput = (err: unknown): err is DomainError => err instanceof DomainError && err.kind === 'invalid';
const hasCode = (err: unknown, code: string): err is DomainError => err instanceof DomainError && err.code === code;

/** A throttle's refusal: its message and, when it says, the seconds to wait (`Retry-After`). */
function throttled(err: unknown): { message: string; headers: Record<string, string> } | null {
  if (!hasCode(err, 'RATE_LIMITED')) return null;
  const seconds = (err as DomainError & { retryAfterSeconds?: unknown }).retryAfterSeconds;
  return { message: err.message, headers: typeof seconds === 'number' ? { 'retry-after': String(Math.ceil(seconds)) } : {} };
}

/**
 * Webhook endpoints of the organizers and applications a user manages, and their delivery logs. Every
 * service call checks that the user manages the endpoint; anything else is the 404 page.
 */
@Controller('webhooks')
@Pages()
export class WebhooksController {
  /** docs/webhooks.md rendered, read at the first request. */
  private guide?: SafeHtml;

  constructor(
    private readonly webhooks: WebhookEndpointsService,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get()
  async index(@SignedIn() signedIn: SignedInUser): Promise<PageResult> {
    const { owners, endpoints } = await this.webhooks.overview(signedIn.user.id);
    return view((c) => webhooksPage({ signedIn, csrfToken: c.csrfToken, owners, endpoints, notice: c.flash?.notice }));
  }

  /** The integrators' guide: public, since whoever writes a receiver need not have an account here. */
  @Get('guide')
  @AnonymousPage()
  async guideView(@CurrentSession() signedIn: SignedInUser | null): Promise<PageResult> {
    try {
      this.guide ??= renderDoc(await readFile(join(projectRoot(), 'docs/webhooks.md'), 'utf8'));
    } catch {
      throw new DomainError('not_found', 'NOT_FOUND', 'The webhooks guide is not installed');
    }
    const guide = this.guide;
    return view((c) => guidePage({ user: signedIn?.user ?? null, csrfToken: c.csrfToken, guide }));
  }

  @Get('new')
  async newForm(@SignedIn() signedIn: SignedInUser, @Query() query: Record<string, unknown>): Promise<PageResult> {
    const owner = await this.managedOwner(signedIn, ownerOf(query));
    return view((c) => newEndpointPage({ signedIn, csrfToken: c.csrfToken, owner, allowHttp: this.config.webhooks.allowHttp }));
  }

  @Post()
  async create(@SignedIn() signedIn: SignedInUser, @Body() body: Record<string, unknown>): Promise<PageResult> {
    const owner = await this.managedOwner(signedIn, ownerOf(body));
    const input = endpointInput(body);
    try {
      const { endpoint, secret } = await this.webhooks.create(signedIn.user.id, owner.owner, input);
      const path = `/webhooks/${endpoint.id}`;
      return seeOther(path, { path, notice: 'Endpoint added.', secret: { label: 'Signing secret', value: secret } });
    } catch (err) {
      if (hasCode(err, 'EMAIL_NOT_VERIFIED')) {
        // The page's own message about verifying (the form hidden), as for applications.
        const unverified = { ...signedIn, user: { ...signedIn.user, emailVerified: false } };
        return view(
          (c) =>
            newEndpointPage({
              signedIn: unverified,
              csrfToken: c.csrfToken,
              owner,
              allowHttp: this.config.webhooks.allowHttp,
              values: input,
            }),
          {
            status: 403,
          },
        );
      }
      if (!isInvalidInput(err) && !hasCode(err, 'TOO_MANY_ENDPOINTS')) throw err;
      const errors = fieldErrors(err);
      return view(
        (c) =>
          newEndpointPage({ signedIn, csrfToken: c.csrfToken, owner, allowHttp: this.config.webhooks.allowHttp, values: input, errors }),
        { status: 422 },
      );
    }
  }

  @Get(':id')
  async show(@SignedIn() signedIn: SignedInUser, @Param('id') id: string, @Query() query: Record<string, unknown>): Promise<PageResult> {
    return this.endpointView(signedIn, await this.managedEndpoint(signedIn, id), { after: formText(query.after) || undefined });
  }

  @Post(':id')
  async update(@SignedIn() signedIn: SignedInUser, @Param('id') id: string, @Body() body: Record<string, unknown>): Promise<PageResult> {
    const endpoint = await this.managedEndpoint(signedIn, id);
    const input = endpointInput(body);
    try {
      await this.webhooks.update(signedIn.user.id, endpoint.id, input);
      return seeOther(`/webhooks/${endpoint.id}`, { path: `/webhooks/${endpoint.id}`, notice: 'Saved.' });
    } catch (err) {
      if (!isInvalidInput(err)) throw err;
      return this.endpointView(signedIn, endpoint, { values: input, errors: fieldErrors(err) }, 422);
    }
  }

  @Post(':id/state')
  async changeState(
    @SignedIn() signedIn: SignedInUser,
    @Param('id') id: string,
    @Body() body: Record<string, unknown>,
  ): Promise<PageResult> {
    const endpoint = await this.managedEndpoint(signedIn, id);
    const state = formText(body.state);
    if (state !== 'active' && state !== 'paused') throw new DomainError('invalid', 'INVALID_STATE', 'Choose active or paused', 'state');
    const changed = await this.webhooks.update(signedIn.user.id, endpoint.id, { state });
    const notice =
      changed.state === 'paused'
        ? 'Endpoint paused: it gets no new deliveries.'
        : endpoint.state === 'disabled'
          ? 'Endpoint enabled again: new events are delivered from now on.'
          : 'Endpoint resumed: new events are delivered from now on.';
    return seeOther(`/webhooks/${endpoint.id}`, { path: `/webhooks/${endpoint.id}`, notice });
  }

  @Post(':id/test')
  async sendTest(@SignedIn() signedIn: SignedInUser, @Param('id') id: string): Promise<PageResult> {
    const endpoint = await this.managedEndpoint(signedIn, id);
    try {
      const delivery = await this.webhooks.sendTest(signedIn.user.id, endpoint.id);
      const path = `/webhooks/${endpoint.id}/deliveries/${delivery.id}`;
      return seeOther(path, { path, notice: 'Test event sent. Reload this page in a moment to see the attempt.' });
    } catch (err) {
      const refusal = throttled(err);
      if (!refusal) throw err;
      return this.endpointView(signedIn, endpoint, { problem: refusal.message }, 429, refusal.headers);
    }
  }

  @Get(':id/secret')
  async confirmRotate(@SignedIn() signedIn: SignedInUser, @Param('id') id: string): Promise<PageResult> {
    const endpoint = await this.managedEndpoint(signedIn, id);
    return view((c) => rotateSecretPage({ signedIn, csrfToken: c.csrfToken, endpoint }));
  }

  @Post(':id/secret')
  async rotate(@SignedIn() signedIn: SignedInUser, @Param('id') id: string, @Body() body: Record<string, unknown>): Promise<PageResult> {
    const endpoint = await this.managedEndpoint(signedIn, id);
    const hours = ROTATION_CHOICES.find((c) => String(c.hours) === formText(body.previous_valid_hours))?.hours;
    if (hours === undefined) {
      const error = 'Choose how long the current secret keeps signing';
      return view((c) => rotateSecretPage({ signedIn, csrfToken: c.csrfToken, endpoint, error }), { status: 422 });
    }
    const { secret } = await this.webhooks.rotateSecret(signedIn.user.id, endpoint.id, hours);
    const path = `/webhooks/${endpoint.id}`;
    const notice =
      hours === 0
        ? 'New secret made: only it signs from now on.'
        : `New secret made: the previous one also signs for ${ROTATION_CHOICES.find((c) => c.hours === hours)!.label}.`;
    return seeOther(path, { path, notice, secret: { label: 'Signing secret', value: secret } });
  }

  @Get(':id/delete')
  async confirmDelete(@SignedIn() signedIn: SignedInUser, @Param('id') id: string): Promise<PageResult> {
    const endpoint = await this.managedEndpoint(signedIn, id);
    return view((c) => confirmDeleteEndpointPage({ signedIn, csrfToken: c.csrfToken, endpoint }));
  }

  @Post(':id/delete')
  async remove(@SignedIn() signedIn: SignedInUser, @Param('id') id: string): Promise<PageResult> {
    const endpoint = await this.managedEndpoint(signedIn, id);
    await this.webhooks.delete(signedIn.user.id, endpoint.id);
    return seeOther('/webhooks', { path: '/webhooks', notice: `Endpoint ${endpoint.url} deleted.` });
  }

  @Get(':id/deliveries/:deliveryId')
  async delivery(
    @SignedIn() signedIn: SignedInUser,
    @Param('id') id: string,
    @Param('deliveryId') deliveryId: string,
  ): Promise<PageResult> {
    return this.deliveryView(signedIn, id, deliveryId, {});
  }

  @Post(':id/deliveries/:deliveryId/redeliver')
  async redeliver(
    @SignedIn() signedIn: SignedInUser,
    @Param('id') id: string,
    @Param('deliveryId') deliveryId: string,
  ): Promise<PageResult> {
    // Checked first: a delivery of another endpoint, or another user's, is the 404 page.
    await this.deliveryOf(signedIn, id, deliveryId);
    const path = `/webhooks/${id}/deliveries/${deliveryId}`;
    try {
      await this.webhooks.redeliver(signedIn.user.id, deliveryId);
      return seeOther(path, { path, notice: 'Redelivery queued. Reload this page in a moment to see the attempt.' });
    } catch (err) {
      const refusal = throttled(err);
      if (!refusal) throw err;
      return this.deliveryView(signedIn, id, deliveryId, { problem: refusal.message }, 429, refusal.headers);
    }
  }

  /** An owner the user manages (one they could add an endpoint to), with its name; else the 404 page. */
  private async managedOwner(signedIn: SignedInUser, owner: WebhookOwner | null): Promise<NamedOwner> {
    if (!owner) throw notFound();
    const { owners } = await this.webhooks.overview(signedIn.user.id);
    const found = owners.find((o) => ownerKey(o.owner) === ownerKey(owner));
    if (!found) throw notFound();
    return found;
  }

  private async managedEndpoint(signedIn: SignedInUser, id: string): Promise<WebhookEndpoint> {
    const endpoint = isUuid(id) ? await this.webhooks.find(signedIn.user.id, id) : null;
    if (!endpoint) throw notFound();
    return endpoint;
  }

  private async deliveryOf(signedIn: SignedInUser, endpointId: string, deliveryId: string) {
    const endpoint = await this.managedEndpoint(signedIn, endpointId);
    const found = isUuid(deliveryId) ? await this.webhooks.delivery(signedIn.user.id, deliveryId) : null;
    if (!found || found.delivery.endpointId !== endpoint.id) throw notFound();
    return { endpoint, ...found };
  }

  private async endpointView(
    signedIn: SignedInUser,
    endpoint: WebhookEndpoint,
    extra: { after?: string; values?: EndpointFormValues; errors?: Record<string, string>; problem?: string },
    status = 200,
    headers: Record<string, string> = {},
  ): Promise<PageResult> {
    const [{ owners }, deliveries] = await Promise.all([
      this.webhooks.overview(signedIn.user.id),
      this.webhooks.deliveries(signedIn.user.id, endpoint.id, { first: DELIVERIES_PER_PAGE, after: extra.after }),
    ]);
    const owner = owners.find((o) => ownerKey(o.owner) === ownerKey(endpoint.owner)) ?? { owner: endpoint.owner, name: '' };
    const log = deliveryLog({ endpointId: endpoint.id, page: deliveries, after: extra.after });
    const now = this.clock.now();
    return view(
      (c) =>
        endpointPage({
          signedIn,
          csrfToken: c.csrfToken,
          endpoint,
          owner,
          allowHttp: this.config.webhooks.allowHttp,
          now,
          log,
          secret: c.flash?.secret?.value,
          notice: c.flash?.notice,
          problem: extra.problem,
          values: extra.values,
          errors: extra.errors,
        }),
      { status, headers },
    );
  }

  private async deliveryView(
    signedIn: SignedInUser,
    endpointId: string,
    deliveryId: string,
    extra: { problem?: string },
    status = 200,
    headers: Record<string, string> = {},
  ): Promise<PageResult> {
    const { endpoint, delivery, attempts } = await this.deliveryOf(signedIn, endpointId, deliveryId);
    const ordered = [...attempts].sort((a, b) => a.number - b.number);
    return view(
      (c) =>
        deliveryPage({
          signedIn,
          csrfToken: c.csrfToken,
          endpoint,
          delivery,
          attempts: ordered,
          notice: c.flash?.notice,
          problem: extra.problem,
        }),
      { status, headers },
    );
  }
}
