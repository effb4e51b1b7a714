import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { idOfType } from '../src/graphql/global-id.js';
import { ApplicationsService } from '../src/oauth/clients/applications.service.js';
import { unsealWebhookSecret } from '../src/webhooks/webhook-secrets.js';
import { WebhookDispatch } from '../src/webhooks/webhook-dispatch.js';
import { WebhookEndpointsService } from '../src/webhooks/webhook-endpoints.service.js';
import { WebhookError } from '../src/webhooks/webhooks.errors.js';
import { createOrganizer, mutate, mutateRaw } from './support/events.js';
import { createUserWithToken } from './support/fixtures.js';
import { graphql } from './support/http.js';
import { startTestApp, TEST_SECRET_KEY, TestApp } from './support/test-app.js';
import { PersonalTokensService } from '../src/personal-tokens/personal-tokens.service.js';
import { Webhook } from 'standardwebhooks';
import { WebhookReceiver } from './support/webhook-receiver.js';
import { eventually } from './support/eventually.js';

/**
 * Managing webhook endpoints through GraphQL (issue 28): who may, what they see (the secret once),
 * every refused input with its code and field, rotation, the delivery log's pages, scopes, throttles.
 */

/** A public literal address: no resolution, and allowed without WEBHOOKS_ALLOW_PRIVATE_TARGETS. */
const PUBLIC_URL = 'https://93.184.215.14/hooks/agora';
const ENDPOINT_FIELDS = `id url description eventTypes state disabledReason previousSecretExpiresAt createdAt
  organizer { id } applicationClientId`;

describe('Webhook endpoints (GraphQL)', () => {
  let t: TestApp;
  let db: DataSource;
  let owner: { id: string; token: string };
  let admin: { id: string; token: string };
  let staff: { id: string; token: string };
  let stranger: { id: string; token: string };
  let ownerReadOnly: string;
  let organizer: { id: string; slug: string };

  async function userWithToken(scopes = ['api']) {
    const { user, token } = await createUserWithToken(t, scopes);
    return { id: user.id, token, username: user.username };
  }

  const create = (token: string | undefined, input: Record<string, unknown>) =>
    mutateRaw(t, token, 'createWebhookEndpoint', input, `webhookEndpoint { ${ENDPOINT_FIELDS} } secret`);

  async function createEndpoint(token: string, input: Record<string, unknown> = {}) {
    return (await mutate(
      t,
      token,
      'createWebhookEndpoint',
      { organizerId: organizer.id, url: PUBLIC_URL, eventTypes: ['REGISTRATION_CREATED'], ...input },
      `webhookEndpoint { ${ENDPOINT_FIELDS} } secret`,
    )) as { webhookEndpoint: Record<string, any>; secret: string };
  }

  beforeAll(async () => {
    t = await startTestApp();
    db = t.get(DataSource);
    const o = await userWithToken();
    owner = o;
    ownerReadOnly = (await t.get(PersonalTokensService).create(o.id, { name: 'read', scopes: ['read_api'] })).token;
    const a = await userWithToken();
    const s = await userWithToken();
    admin = a;
    staff = s;
    stranger = await userWithToken();
    organizer = await createOrganizer(t, owner.token);
    await mutate(
      t,
      owner.token,
      'addOrganizerMember',
      { organizerId: organizer.id, username: a.username, role: 'ADMIN' },
      'member { role }',
    );
    await mutate(
      t,
      owner.token,
      'addOrganizerMember',
      { organizerId: organizer.id, username: s.username, role: 'CHECK_IN_STAFF' },
      'member { role }',
    );
  });
  afterAll(() => t.close());

  it('creates an endpoint for its owners and admins, with a whsec_ secret shown once and stored sealed', async () => {
    const { webhookEndpoint, secret } = await createEndpoint(owner.token, {
      eventTypes: ['REGISTRATION_CONFIRMED', 'ATTENDEE_CHECK_IN_UNDONE', 'REGISTRATION_CONFIRMED'],
      description: '  CRM sync  ',
    });
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(webhookEndpoint).toMatchObject({
      url: PUBLIC_URL,
      description: 'CRM sync',
      eventTypes: ['REGISTRATION_CONFIRMED', 'ATTENDEE_CHECK_IN_UNDONE'],
      state: 'ACTIVE',
      organizer: { id: organizer.id },
      applicationClientId: null,
      previousSecretExpiresAt: null,
    });
    const [row] = (await db.query(`SELECT secret_sealed, event_types, created_by FROM webhook_endpoints WHERE id = $1`, [
      webhookEndpoint.id,
    ])) as { secret_sealed: string; event_types: string[]; created_by: string }[];
    expect(row!.secret_sealed).not.toContain(secret.slice('whsec_'.length));
    expect(unsealWebhookSecret(TEST_SECRET_KEY, row!.secret_sealed)).toBe(secret);
    expect(row!.event_types).toEqual(['registration.confirmed', 'attendee.check_in_undone']);
    expect(row!.created_by).toBe(owner.id);

    // Every later read: the endpoint, never its secret.
    const read = await graphql(
      t.url,
      `query($id: ID!, $slug: String!) {
        webhookEndpoint(id: $id) { ${ENDPOINT_FIELDS} }
        organizer(slug: $slug) { webhookEndpoints { id url } }
      }`,
      { privateToken: admin.token, variables: { id: webhookEndpoint.id, slug: organizer.slug } },
    );
    expect(read.body.errors).toBeUndefined();
    expect(read.body.data!.webhookEndpoint).toEqual(webhookEndpoint);
    expect(read.body.data!.organizer.webhookEndpoints).toContainEqual({ id: webhookEndpoint.id, url: PUBLIC_URL });
    expect(read.text).not.toContain(secret.slice('whsec_'.length, 20));
    const introspected = await graphql(t.url, '{ __type(name: "WebhookEndpoint") { fields { name } } }');
    expect((introspected.body.data!.__type.fields as { name: string }[]).map((f) => f.name)).not.toContain('secret');

    const byAdmin = await createEndpoint(admin.token);
    expect(byAdmin.secret).not.toBe(secret);
  });

  it('refuses check-in staff, other users and anonymous callers', async () => {
    const { webhookEndpoint } = await createEndpoint(owner.token);
    for (const caller of [staff, stranger]) {
      const refused = await create(caller.token, { organizerId: organizer.id, url: PUBLIC_URL, eventTypes: ['EVENT_CHANGED'] });
      expect(refused.body.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN', reason: 'FORBIDDEN' });
      expect(refused.body.errors?.[0]?.message).toBe("Only the organizer's owners and admins manage its webhooks.");

      const list = await graphql(t.url, 'query($slug: String!) { organizer(slug: $slug) { name webhookEndpoints { id } } }', {
        privateToken: caller.token,
        variables: { slug: organizer.slug },
      });
      expect(list.body.data!.organizer).toEqual({ name: expect.any(String), webhookEndpoints: null });
      expect(list.body.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN' });

      const one = await graphql(t.url, 'query($id: ID!) { webhookEndpoint(id: $id) { id } }', {
        privateToken: caller.token,
        variables: { id: webhookEndpoint.id },
      });
      expect(one.body).toEqual({ data: { webhookEndpoint: null } });

      for (const [mutation, input] of [
        ['updateWebhookEndpoint', { id: webhookEndpoint.id, description: 'mine now' }],
        ['deleteWebhookEndpoint', { id: webhookEndpoint.id }],
        ['rotateWebhookEndpointSecret', { id: webhookEndpoint.id }],
        ['sendTestWebhook', { webhookEndpointId: webhookEndpoint.id }],
      ] as const) {
        const res = await mutateRaw(t, caller.token, mutation, input, '__typename');
        // Named by the input's own field: `id`, or `webhookEndpointId` for a test event.
        expect(res.body.errors?.[0]?.extensions).toMatchObject({
          code: 'NOT_FOUND',
          reason: 'NOT_FOUND',
          field: mutation === 'sendTestWebhook' ? 'webhookEndpointId' : 'id',
        });
      }
    }

    const anonymous = await graphql(t.url, 'query($slug: String!) { organizer(slug: $slug) { webhookEndpoints { id } } }', {
      variables: { slug: organizer.slug },
    });
    expect(anonymous.body.data!.organizer.webhookEndpoints).toBeNull();
    expect(anonymous.body.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN' });
    const anonymousRoot = await graphql(t.url, 'query($id: ID!) { webhookEndpoint(id: $id) { id } }', {
      variables: { id: webhookEndpoint.id },
    });
    expect(anonymousRoot.status).toBe(401);
    const anonymousCreate = await create(undefined, { organizerId: organizer.id, url: PUBLIC_URL, eventTypes: ['EVENT_CHANGED'] });
    expect(anonymousCreate.status).toBe(401);

    const [{ n }] = (await db.query(`SELECT count(*)::int AS n FROM webhook_endpoints WHERE id = $1 AND description = ''`, [
      webhookEndpoint.id,
    ])) as [{ n: number }];
    expect(n).toBe(1);
  });

  it("lets an application's owner, and only them, manage its endpoints by client ID", async () => {
    const { application } = await t
      .get(ApplicationsService)
      .create(owner.id, { name: 'Badge printer', redirectUris: ['https://badges.example.com/callback'], scopes: ['read_api'] });
    const created = await mutate(
      t,
      owner.token,
      'createWebhookEndpoint',
      { applicationClientId: application.clientId, url: PUBLIC_URL, eventTypes: ['ATTENDEE_CHECKED_IN'] },
      `webhookEndpoint { ${ENDPOINT_FIELDS} } secret`,
    );
    expect(created.webhookEndpoint).toMatchObject({ organizer: null, applicationClientId: application.clientId });

    const list = await graphql(t.url, 'query($c: String!) { applicationWebhookEndpoints(clientId: $c) { id } }', {
      privateToken: owner.token,
      variables: { c: application.clientId },
    });
    expect(list.body.data!.applicationWebhookEndpoints).toEqual([{ id: created.webhookEndpoint.id }]);

    for (const caller of [admin, stranger]) {
      const refused = await create(caller.token, {
        applicationClientId: application.clientId,
        url: PUBLIC_URL,
        eventTypes: ['ATTENDEE_CHECKED_IN'],
      });
      expect(refused.body.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND', reason: 'NOT_FOUND', field: 'applicationClientId' });
      const theirList = await graphql(t.url, 'query($c: String!) { applicationWebhookEndpoints(clientId: $c) { id } }', {
        privateToken: caller.token,
        variables: { c: application.clientId },
      });
      expect(theirList.body.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND' });
    }

    const both = await create(owner.token, {
      organizerId: organizer.id,
      applicationClientId: application.clientId,
      url: PUBLIC_URL,
      eventTypes: ['EVENT_CHANGED'],
    });
    expect(both.body.data!.createWebhookEndpoint.userErrors).toEqual([
      { field: ['input', 'organizerId'], code: 'INVALID_OWNER', message: expect.any(String) },
    ]);
  });

  describe('refuses bad input with a code and the field', () => {
    async function userErrorsOf(input: Record<string, unknown>) {
      const res = await create(owner.token, { organizerId: organizer.id, url: PUBLIC_URL, eventTypes: ['EVENT_CHANGED'], ...input });
      expect(res.body.errors).toBeUndefined();
      expect(res.body.data!.createWebhookEndpoint.webhookEndpoint).toBeNull();
      expect(res.body.data!.createWebhookEndpoint.secret).toBeNull();
      return res.body.data!.createWebhookEndpoint.userErrors as { field: string[]; code: string; message: string }[];
    }

    it.each([
      ['not a URL', 'webhooks.example.com/hook', 'INVALID_URL', 'Not a valid URL.'],
      ['an empty URL', '   ', 'INVALID_URL', 'Give the URL the deliveries are POSTed to.'],
      ['http without WEBHOOKS_ALLOW_HTTP', 'http://93.184.215.14/hook', 'INVALID_URL', 'The URL must start with https://.'],
      ['another scheme', 'ftp://93.184.215.14/hook', 'INVALID_URL', 'The URL must start with https://.'],
      ['credentials', 'https://me:pw@93.184.215.14/hook', 'INVALID_URL', 'The URL must not contain a user name or password.'],
      ['a URL too long', `https://93.184.215.14/${'a'.repeat(2040)}`, 'INVALID_URL', 'A URL has at most 2048 characters.'],
      ['a private address', 'https://10.0.0.1/hook', 'TARGET_NOT_ALLOWED', expect.stringContaining('public addresses only')],
      ['loopback', 'https://127.0.0.1:8443/hook', 'TARGET_NOT_ALLOWED', expect.stringContaining('public addresses only')],
      ['IPv4-mapped loopback', 'https://[::ffff:127.0.0.1]/hook', 'TARGET_NOT_ALLOWED', expect.any(String)],
      ['the metadata address', 'https://169.254.169.254/latest', 'TARGET_NOT_ALLOWED', expect.any(String)],
      ['localhost', 'https://localhost/hook', 'TARGET_NOT_ALLOWED', expect.any(String)],
      ['a name that does not resolve', 'https://no-such-host.invalid/hook', 'TARGET_NOT_ALLOWED', expect.stringContaining('resolve')],
    ])('%s', async (_what, url, code, message) => {
      expect(await userErrorsOf({ url })).toEqual([{ field: ['input', 'url'], code, message }]);
    });

    it('no event type, a description over 500 characters: every field at once', async () => {
      expect(await userErrorsOf({ url: 'http://x', eventTypes: [], description: 'd'.repeat(501) })).toEqual([
        { field: ['input', 'url'], code: 'INVALID_URL', message: 'The URL must start with https://.' },
        { field: ['input', 'eventTypes'], code: 'INVALID_EVENT_TYPES', message: 'Choose at least one event type.' },
        { field: ['input', 'description'], code: 'INVALID_DESCRIPTION', message: 'A description has at most 500 characters.' },
      ]);
    });

    it('an unknown event type: refused by the schema (GraphQL), by the service (pages)', async () => {
      const res = await create(owner.token, { organizerId: organizer.id, url: PUBLIC_URL, eventTypes: ['REGISTRATION_EXPLODED'] });
      expect(res.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(res.body.errors?.[0]?.message).toContain('REGISTRATION_EXPLODED');
      const organizerId = idOfType(organizer.id, 'Organizer')!;
      const refused = await t
        .get(WebhookEndpointsService)
        .create(owner.id, { kind: 'organizer', organizerId }, { url: PUBLIC_URL, eventTypes: ['registration.exploded' as never] })
        .catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(WebhookError);
      expect(refused).toMatchObject({
        code: 'INVALID_EVENT_TYPES',
        field: 'eventTypes',
        message: 'Unknown event type: registration.exploded.',
      });
    });

    it('an unverified e-mail address', async () => {
      // Verified while it makes its token and organizer, which need it too; then the address changes.
      const { user, token } = await createUserWithToken(t);
      const other = await createOrganizer(t, token);
      await db.query(`UPDATE users SET email_verified_at = NULL WHERE id = $1`, [user.id]);
      const res = await create(token, { organizerId: other.id, url: PUBLIC_URL, eventTypes: ['EVENT_CHANGED'] });
      expect(res.body.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN', reason: 'EMAIL_NOT_VERIFIED' });
      expect(res.body.errors?.[0]?.message).toContain('Verify your e-mail address first');
    }, 30_000);

    it('the 21st endpoint of an owner', async () => {
      const another = await createOrganizer(t, owner.token);
      const service = t.get(WebhookEndpointsService);
      const organizerId = idOfType(another.id, 'Organizer')!;
      for (let i = 0; i < 20; i++)
        await service.create(owner.id, { kind: 'organizer', organizerId }, { url: `${PUBLIC_URL}/${i}`, eventTypes: ['event.changed'] });
      const res = await create(owner.token, { organizerId: another.id, url: PUBLIC_URL, eventTypes: ['EVENT_CHANGED'] });
      expect(res.body.data!.createWebhookEndpoint.userErrors).toEqual([
        {
          field: ['input', 'organizerId'],
          code: 'TOO_MANY_ENDPOINTS',
          message: 'An organizer has at most 20 webhook endpoints: delete one first.',
        },
      ]);
    });
  });

  it('updates, pauses, re-enables a disabled endpoint, and deletes', async () => {
    const { webhookEndpoint } = await createEndpoint(owner.token);
    const update = (input: Record<string, unknown>) =>
      mutateRaw(t, admin.token, 'updateWebhookEndpoint', { id: webhookEndpoint.id, ...input }, `webhookEndpoint { ${ENDPOINT_FIELDS} }`);

    const paused = await update({
      active: false,
      description: 'Paused for the migration',
      eventTypes: ['EVENT_CANCELLED', 'EVENT_CHANGED'],
    });
    expect(paused.body.data!.updateWebhookEndpoint).toMatchObject({
      webhookEndpoint: { state: 'PAUSED', description: 'Paused for the migration', eventTypes: ['EVENT_CANCELLED', 'EVENT_CHANGED'] },
      userErrors: [],
    });
    const refused = await update({ url: 'https://192.168.1.20/hook', eventTypes: [] });
    expect(refused.body.data!.updateWebhookEndpoint.userErrors.map((e: { code: string }) => e.code)).toEqual([
      'TARGET_NOT_ALLOWED',
      'INVALID_EVENT_TYPES',
    ]);

    await db.query(
      `UPDATE webhook_endpoints SET state = 'disabled', disabled_reason = 'Failing for 3 days', disabled_at = now(), failing_since = now() WHERE id = $1`,
      [webhookEndpoint.id],
    );
    const disabled = await graphql(t.url, 'query($id: ID!) { webhookEndpoint(id: $id) { state disabledReason } }', {
      privateToken: owner.token,
      variables: { id: webhookEndpoint.id },
    });
    expect(disabled.body.data!.webhookEndpoint).toEqual({ state: 'DISABLED', disabledReason: 'Failing for 3 days' });
    const enabled = await update({ active: true, url: 'https://93.184.215.14/v2' });
    expect(enabled.body.data!.updateWebhookEndpoint.webhookEndpoint).toMatchObject({
      state: 'ACTIVE',
      disabledReason: null,
      url: 'https://93.184.215.14/v2',
    });
    const [row] = (await db.query(`SELECT failing_since, disabled_at FROM webhook_endpoints WHERE id = $1`, [
      webhookEndpoint.id,
    ])) as Record<string, unknown>[];
    expect(row).toEqual({ failing_since: null, disabled_at: null });

    const deleted = await mutateRaw(t, owner.token, 'deleteWebhookEndpoint', { id: webhookEndpoint.id }, 'deletedWebhookEndpointId');
    expect(deleted.body.data!.deleteWebhookEndpoint).toEqual({ deletedWebhookEndpointId: webhookEndpoint.id, userErrors: [] });
    const again = await mutateRaw(t, owner.token, 'deleteWebhookEndpoint', { id: webhookEndpoint.id }, 'deletedWebhookEndpointId');
    expect(again.body.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND', field: 'id' });
  });

  it('rotates the secret: a new one shown once, the previous one kept sealed until it expires', async () => {
    const { webhookEndpoint, secret } = await createEndpoint(owner.token);
    const rotate = (input: Record<string, unknown>) =>
      mutateRaw(
        t,
        owner.token,
        'rotateWebhookEndpointSecret',
        { id: webhookEndpoint.id, ...input },
        'webhookEndpoint { previousSecretExpiresAt } secret',
      );

    const before = t.clock.now().getTime();
    const first = (await rotate({})).body.data!.rotateWebhookEndpointSecret;
    expect(first.secret).toMatch(/^whsec_/);
    expect(first.secret).not.toBe(secret);
    const expiresAt = new Date(first.webhookEndpoint.previousSecretExpiresAt).getTime();
    expect(expiresAt - before).toBeGreaterThanOrEqual(24 * 3600_000 - 1000);
    expect(expiresAt - before).toBeLessThanOrEqual(24 * 3600_000 + 5000);
    const [row] = (await db.query(`SELECT secret_sealed, previous_secret_sealed FROM webhook_endpoints WHERE id = $1`, [
      webhookEndpoint.id,
    ])) as {
      secret_sealed: string;
      previous_secret_sealed: string;
    }[];
    expect(unsealWebhookSecret(TEST_SECRET_KEY, row!.secret_sealed)).toBe(first.secret);
    expect(unsealWebhookSecret(TEST_SECRET_KEY, row!.previous_secret_sealed)).toBe(secret);

    const second = (await rotate({ previousSecretValidForHours: 0 })).body.data!.rotateWebhookEndpointSecret;
    expect(second.webhookEndpoint.previousSecretExpiresAt).toBeNull();
    const [after] = (await db.query(`SELECT previous_secret_sealed FROM webhook_endpoints WHERE id = $1`, [webhookEndpoint.id])) as {
      previous_secret_sealed: string | null;
    }[];
    expect(after!.previous_secret_sealed).toBeNull();

    const refused = (await rotate({ previousSecretValidForHours: 169 })).body.data!.rotateWebhookEndpointSecret;
    expect(refused).toEqual({
      webhookEndpoint: null,
      secret: null,
      userErrors: [
        {
          field: ['input', 'previousSecretValidForHours'],
          code: 'INVALID_ROTATION',
          message: 'The previous secret may keep signing for 0 to 168 hours (a whole number).',
        },
      ],
    });
  });

  it('rotates twice at once without losing a secret: each rotation replaces the secret current at that moment', async () => {
    const { webhookEndpoint } = await createEndpoint(owner.token);
    const endpointId = webhookEndpoint.id as string;
    const service = t.get(WebhookEndpointsService);
    const [a, b] = await Promise.all([service.rotateSecret(owner.id, endpointId, 24), service.rotateSecret(owner.id, endpointId, 24)]);
    const [row] = (await db.query(`SELECT secret_sealed, previous_secret_sealed FROM webhook_endpoints WHERE id = $1`, [endpointId])) as {
      secret_sealed: string;
      previous_secret_sealed: string;
    }[];
    // The one that went second kept the first one's secret signing beside its own; the original is gone.
    const kept = [
      unsealWebhookSecret(TEST_SECRET_KEY, row!.secret_sealed),
      unsealWebhookSecret(TEST_SECRET_KEY, row!.previous_secret_sealed),
    ];
    expect(kept.sort()).toEqual([a.secret, b.secret].sort());
  });

  it('stores the URL as the parser writes it: tabs and line breaks never reach the log, the pages or a mail', async () => {
    const { webhookEndpoint } = await createEndpoint(owner.token, { url: 'https://93.184.215.14/ho\toks/ag\r\nora?x=1' });
    expect(webhookEndpoint.url).toBe('https://93.184.215.14/hooks/agora?x=1');
    const [row] = (await db.query(`SELECT url FROM webhook_endpoints WHERE id = $1`, [webhookEndpoint.id])) as {
      url: string;
    }[];
    expect(row!.url).toBe('https://93.184.215.14/hooks/agora?x=1');
  });

  it('throttles the URL checks that resolve a name: 30 a minute per user, then RATE_LIMITED', async () => {
    const user = await userWithToken();
    const own = await createOrganizer(t, user.token);
    const organizerId = idOfType(own.id, 'Organizer')!;
    const service = t.get(WebhookEndpointsService);
    const attempt = (url: string) =>
      service.create(user.id, { kind: 'organizer', organizerId }, { url, eventTypes: ['event.changed'] }).catch((err: unknown) => err);
    // Literal addresses resolve nothing: not counted.
    for (let i = 0; i < 5; i++) expect(await attempt(`https://10.0.0.${i + 1}/hook`)).toMatchObject({ code: 'TARGET_NOT_ALLOWED' });
    for (let i = 0; i < 30; i++)
      expect(await attempt(`https://n${i}.no-such-host.invalid/hook`)).toMatchObject({ code: 'TARGET_NOT_ALLOWED' });
    expect(await attempt('https://n30.no-such-host.invalid/hook')).toMatchObject({
      code: 'RATE_LIMITED',
      message: expect.stringMatching(/^At most 30 endpoint addresses/),
    });
  }, 30_000);

  describe('the delivery log', () => {
    let endpointId: string;
    /** Delivery ids, newest first. */
    const deliveries: string[] = [];

    beforeAll(async () => {
      endpointId = (await createEndpoint(owner.token)).webhookEndpoint.id;
      // Paused: the sweeper leaves its deliveries as written here (the scheduled ones are long due).
      await db.query(`UPDATE webhook_endpoints SET state = 'paused' WHERE id = $1`, [endpointId]);
      const base = Date.parse('2026-11-20T10:00:00Z');
      for (let i = 0; i < 25; i++) {
        const messageId = randomUUID();
        const deliveryId = randomUUID();
        const at = new Date(base + i * 60_000);
        const body = JSON.stringify({ type: 'registration.created', timestamp: at.toISOString(), data: { n: i } });
        await db.query(`INSERT INTO webhook_messages (id, event_type, body, created_at) VALUES ($1, 'registration.created', $2, $3)`, [
          messageId,
          body,
          at,
        ]);
        await db.query(
          `INSERT INTO webhook_deliveries (id, message_id, endpoint_id, state, attempts, next_attempt_at, last_attempt_at, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
          [deliveryId, messageId, endpointId, i % 2 ? 'succeeded' : 'scheduled', 1, i % 2 ? null : new Date(at.getTime() + 60_000), at, at],
        );
        await db.query(
          `INSERT INTO webhook_attempts (id, delivery_id, number, trigger, started_at, duration_ms, outcome, response_status, response_body, error)
           VALUES ($1, $2, 1, 'automatic', $3, 42, $4, $5, $6, NULL)`,
          [randomUUID(), deliveryId, at, i % 2 ? 'succeeded' : 'failed', i % 2 ? 200 : 503, i % 2 ? 'ok' : 'busy'],
        );
        deliveries.unshift(deliveryId);
      }
    });

    const page = (token: string, variables: Record<string, unknown>) =>
      graphql(
        t.url,
        `
          query ($id: ID!, $first: Int, $after: String) {
            webhookEndpoint(id: $id) {
              deliveries(first: $first, after: $after) {
                edges {
                  cursor
                  node {
                    id
                  }
                }
                nodes {
                  id
                  webhookId
                  eventType
                  state
                  attemptCount
                  nextAttemptAt
                  lastAttemptAt
                  createdAt
                  requestBody
                  attempts {
                    number
                    trigger
                    startedAt
                    durationMs
                    outcome
                    responseStatus
                    responseBody
                    error
                  }
                }
                pageInfo {
                  hasNextPage
                  endCursor
                }
              }
            }
          }
        `,
        { privateToken: token, variables: { id: endpointId, ...variables } },
      );

    it('pages the deliveries newest first, with every attempt', async () => {
      const seen: string[] = [];
      let after: string | undefined;
      for (;;) {
        const res = await page(owner.token, { first: 10, after });
        expect(res.body.errors).toBeUndefined();
        const connection = res.body.data!.webhookEndpoint.deliveries;
        seen.push(...connection.nodes.map((n: { id: string }) => n.id));
        if (!connection.pageInfo.hasNextPage) break;
        after = connection.pageInfo.endCursor;
      }
      expect(seen).toEqual(deliveries);

      const first = (await page(admin.token, { first: 2 })).body.data!.webhookEndpoint.deliveries;
      expect(first.nodes[0]).toEqual({
        id: deliveries[0],
        webhookId: expect.stringMatching(/^msg_[0-9a-f-]{36}$/),
        eventType: 'registration.created',
        state: 'SCHEDULED',
        attemptCount: 1,
        nextAttemptAt: '2026-11-20T10:25:00.000Z',
        lastAttemptAt: '2026-11-20T10:24:00.000Z',
        createdAt: '2026-11-20T10:24:00.000Z',
        requestBody: JSON.stringify({ type: 'registration.created', timestamp: '2026-11-20T10:24:00.000Z', data: { n: 24 } }),
        attempts: [
          {
            number: 1,
            trigger: 'AUTOMATIC',
            startedAt: '2026-11-20T10:24:00.000Z',
            durationMs: 42,
            outcome: 'FAILED',
            responseStatus: 503,
            responseBody: 'busy',
            error: null,
          },
        ],
      });
      expect(first.nodes[1]).toMatchObject({ state: 'SUCCEEDED', attempts: [{ outcome: 'SUCCEEDED', responseStatus: 200 }] });

      const one = await graphql(t.url, 'query($id: ID!) { webhookDelivery(id: $id) { id attempts { number } } }', {
        privateToken: ownerReadOnly,
        variables: { id: deliveries[3] },
      });
      expect(one.body.data!.webhookDelivery).toEqual({ id: deliveries[3], attempts: [{ number: 1 }] });
    });

    it('at most 100 a page, cursors of this list only, and only for those who manage the endpoint', async () => {
      const tooMany = await page(owner.token, { first: 101 });
      expect(tooMany.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'INVALID_PAGE_SIZE' });
      const forged = await page(owner.token, { first: 1, after: 'bm90LWEtY3Vyc29y' });
      expect(forged.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'INVALID_CURSOR' });

      expect((await page(staff.token, { first: 5 })).body.data).toEqual({ webhookEndpoint: null });
      const theirs = await graphql(t.url, 'query($id: ID!) { webhookDelivery(id: $id) { id } }', {
        privateToken: stranger.token,
        variables: { id: deliveries[0] },
      });
      expect(theirs.body).toEqual({ data: { webhookDelivery: null } });
    });

    it('throttles test events and redeliveries to 10 a minute per endpoint (RATE_LIMITED)', async () => {
      // The dispatch's side is tested with it (test/webhooks-delivery*.test.ts); here, what the API adds.
      const dispatch = t.get(WebhookDispatch);
      const sent: string[] = [];
      const original = { sendTest: dispatch.sendTest, redeliver: dispatch.redeliver };
      dispatch.sendTest = async (id: string) => {
        sent.push(`test:${id}`);
        return deliveries[0]!;
      };
      dispatch.redeliver = async (id: string) => void sent.push(`redeliver:${id}`);
      try {
        for (let i = 0; i < 10; i++) {
          const ok = await mutateRaw(t, owner.token, 'sendTestWebhook', { webhookEndpointId: endpointId }, 'webhookDelivery { id }');
          expect(ok.body.data!.sendTestWebhook).toEqual({ webhookDelivery: { id: deliveries[0] }, userErrors: [] });
        }
        const refused = await mutateRaw(t, admin.token, 'sendTestWebhook', { webhookEndpointId: endpointId }, 'webhookDelivery { id }');
        expect(refused.body.errors?.[0]).toMatchObject({
          message: expect.stringMatching(/^At most 10 test events a minute per endpoint: try again in \d+ seconds\.$/),
          extensions: { code: 'RATE_LIMITED', reason: 'RATE_LIMITED' },
        });

        for (let i = 0; i < 10; i++) {
          const ok = await mutateRaw(t, owner.token, 'redeliverWebhook', { deliveryId: deliveries[i % 3] }, 'webhookDelivery { id state }');
          expect(ok.body.data!.redeliverWebhook.webhookDelivery.id).toBe(deliveries[i % 3]);
        }
        const again = await mutateRaw(t, owner.token, 'redeliverWebhook', { deliveryId: deliveries[0] }, 'webhookDelivery { id }');
        expect(again.body.errors?.[0]?.extensions).toMatchObject({ code: 'RATE_LIMITED' });
        const strangers = await mutateRaw(t, stranger.token, 'redeliverWebhook', { deliveryId: deliveries[0] }, 'webhookDelivery { id }');
        expect(strangers.body.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND', field: 'deliveryId' });
        expect(sent.filter((s) => s.startsWith('test:'))).toHaveLength(10);
        expect(sent.filter((s) => s.startsWith('redeliver:'))).toHaveLength(10);
      } finally {
        Object.assign(dispatch, original);
      }
    });
  });

  it("overview: the owners a user manages endpoints of (the dashboard's list), and their endpoints", async () => {
    const service = t.get(WebhookEndpointsService);
    const organizerId = idOfType(organizer.id, 'Organizer')!;
    const forAdmin = await service.overview(admin.id);
    expect(forAdmin.owners).toContainEqual({ owner: { kind: 'organizer', organizerId }, name: expect.any(String) });
    expect(forAdmin.endpoints.length).toBeGreaterThan(0);
    expect(forAdmin.endpoints.every((e) => e.owner.kind === 'organizer' && e.owner.organizerId === organizerId)).toBe(true);
    const forOwner = await service.overview(owner.id);
    expect(forOwner.owners.map((o) => o.owner.kind)).toContain('application');
    expect(await service.overview(staff.id)).toEqual({ owners: [], endpoints: [] });
  });

  it('reads with read_api, changes with api only', async () => {
    const { webhookEndpoint } = await createEndpoint(owner.token);
    const read = await graphql(t.url, 'query($id: ID!) { webhookEndpoint(id: $id) { id } }', {
      privateToken: ownerReadOnly,
      variables: { id: webhookEndpoint.id },
    });
    expect(read.body).toEqual({ data: { webhookEndpoint: { id: webhookEndpoint.id } } });
    for (const [mutation, input] of [
      ['createWebhookEndpoint', { organizerId: organizer.id, url: PUBLIC_URL, eventTypes: ['EVENT_CHANGED'] }],
      ['updateWebhookEndpoint', { id: webhookEndpoint.id, active: false }],
      ['deleteWebhookEndpoint', { id: webhookEndpoint.id }],
      ['rotateWebhookEndpointSecret', { id: webhookEndpoint.id }],
      ['sendTestWebhook', { webhookEndpointId: webhookEndpoint.id }],
      ['redeliverWebhook', { deliveryId: randomUUID() }],
    ] as const) {
      const res = await mutateRaw(t, ownerReadOnly, mutation, input, '__typename');
      expect(res.status).toBe(403);
    }
  });
});

describe('Webhook endpoints where the operator allows http and private targets', () => {
  // An application of its own, started once the other has closed (two in one process share the embedded database's driver).
  let open: TestApp;
  let receiver: WebhookReceiver;
  let token: string;
  let mine: { id: string };

  beforeAll(async () => {
    open = await startTestApp({ WEBHOOKS_ALLOW_HTTP: 'true', WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true' });
    receiver = await WebhookReceiver.start();
    ({ token } = await createUserWithToken(open));
    mine = await createOrganizer(open, token);
  }, 60_000);
  afterAll(async () => {
    await receiver.close();
    await open.close();
  });

  it('allows http and private targets', async () => {
    const res = await mutateRaw(
      open,
      token,
      'createWebhookEndpoint',
      { organizerId: mine.id, url: 'http://127.0.0.1:9/receiver', eventTypes: ['EVENT_PUBLISHED'] },
      'webhookEndpoint { url } secret',
    );
    expect(res.body.data!.createWebhookEndpoint).toMatchObject({
      webhookEndpoint: { url: 'http://127.0.0.1:9/receiver' },
      userErrors: [],
    });
  });

  it('sends a test event and redelivers it through the dispatch, signed with the secret shown once', async () => {
    const created = await mutate(
      open,
      token,
      'createWebhookEndpoint',
      { organizerId: mine.id, url: receiver.url('/api-test'), eventTypes: ['EVENT_PUBLISHED'] },
      'webhookEndpoint { id } secret',
    );
    const endpointId = created.webhookEndpoint.id as string;
    const sent = await mutate(
      open,
      token,
      'sendTestWebhook',
      { webhookEndpointId: endpointId },
      'webhookDelivery { id webhookId eventType }',
    );
    expect(sent.webhookDelivery).toMatchObject({ eventType: 'webhook.test', webhookId: expect.stringMatching(/^msg_/) });
    await eventually(() => expect(receiver.at('/api-test')).toHaveLength(1));
    const [request] = receiver.at('/api-test');
    expect(request!.headers['webhook-id']).toBe(sent.webhookDelivery.webhookId);
    expect(new Webhook(created.secret).verify(request!.body, request!.headers)).toMatchObject({
      type: 'webhook.test',
      data: { endpoint_id: endpointId },
    });

    const log = async () =>
      (
        await graphql(
          open.url,
          'query($id: ID!) { webhookDelivery(id: $id) { state attemptCount attempts { number trigger outcome responseStatus } } }',
          { privateToken: token, variables: { id: sent.webhookDelivery.id } },
        )
      ).body.data!.webhookDelivery;
    await eventually(async () =>
      expect(await log()).toEqual({
        state: 'SUCCEEDED',
        attemptCount: 1,
        attempts: [{ number: 1, trigger: 'TEST', outcome: 'SUCCEEDED', responseStatus: 200 }],
      }),
    );

    await mutate(open, token, 'redeliverWebhook', { deliveryId: sent.webhookDelivery.id }, 'webhookDelivery { id }');
    await eventually(() => expect(receiver.at('/api-test')).toHaveLength(2));
    expect(receiver.at('/api-test')[1]!.headers['webhook-id']).toBe(sent.webhookDelivery.webhookId);
    await eventually(async () => expect((await log()).attempts).toHaveLength(2));
    expect((await log()).attempts[1]).toMatchObject({ number: 2, trigger: 'REDELIVERY', outcome: 'SUCCEEDED' });
  }, 60_000);
});
