import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import type { DomainEvent, DomainEventType } from '../src/events/domain-events.js';
import { WebhookOutbox } from '../src/events/webhook-outbox.js';
import { toGlobalId } from '../src/graphql/global-id.js';
import { HousekeepingService } from '../src/housekeeping/housekeeping.service.js';
import { WebhookAttempts } from '../src/webhooks/webhook-attempts.js';
import { WebhookDispatch } from '../src/webhooks/webhook-dispatch.js';
import { WebhookFanOutHandler } from '../src/webhooks/webhook-fan-out.js';
import { newWebhookSecret, sealWebhookSecret } from '../src/webhooks/webhook-secrets.js';
import { createEvent, createOrganizer, registerFor, registrationOf } from './support/events.js';
import { createUser, createUserWithToken } from './support/fixtures.js';
import { startSmtpServer, type TestSmtpServer } from './support/smtp-server.js';
import { startTestApp, type TestApp } from './support/test-app.js';
import { deduplicated, verify, WebhookReceiver, type ReceivedWebhook } from './support/webhook-receiver.js';
import { eventually } from './support/eventually.js';
import { webhooksSettled } from './support/webhook-sweeps.js';

// Deliveries end to end: the events domain's outbox, the fan-out job, the attempt jobs and the sweeper
// of a real application, against a receiver in this process that verifies every request with the
// `standardwebhooks` library. Time moves with the TestClock: retries days apart take seconds.

const METRICS_TOKEN = 'metrics-token-webhooks-delivery-4kQ9sT2vXw7Zp1';
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

let t: TestApp;
let smtp: TestSmtpServer;
let receiver: WebhookReceiver;
let db: DataSource;
/** Each endpoint's path answers its own status (200 unless set). */
const statusOf = new Map<string, number>();

beforeAll(async () => {
  smtp = await startSmtpServer();
  receiver = await WebhookReceiver.start();
  receiver.answer((request) => statusOf.get(request.path) ?? 200);
  t = await startTestApp({
    SMTP_URL: smtp.url,
    MAIL_FROM: 'Agora <agora@webhooks.test>',
    WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOKS_ALLOW_HTTP: 'true',
    JOBS_RETRY_DELAY_SECONDS: '1',
    METRICS_TOKEN,
  });
  db = t.get(DataSource);
}, 60_000);
afterAll(async () => {
  await t?.close();
  await receiver?.close();
  await smtp?.close();
});

interface Endpoint {
  id: string;
  secret: string;
  path: string;
}

/** An endpoint inserted as the management service stores one: the secret sealed under SECRET_KEY. */
async function addEndpoint(
  owner: { organizerId: string } | { applicationId: string },
  eventTypes: string[],
  options: { state?: 'active' | 'paused' | 'disabled'; previous?: { secret: string; expiresAt: Date } } = {},
): Promise<Endpoint> {
  const id = randomUUID();
  const secret = newWebhookSecret();
  const path = `/hooks/${id}`;
  const seal = (value: string) => sealWebhookSecret(t.config.secretKey!, value);
  await db.query(
    `INSERT INTO webhook_endpoints (id, organizer_id, application_id, url, description, event_types, state, secret_sealed,
                                    previous_secret_sealed, previous_secret_expires_at, created_at, updated_at)
     VALUES ($1, $2, $3, $4, 'test receiver', $5, $6, $7, $8, $9, now(), now())`,
    [
      id,
      'organizerId' in owner ? owner.organizerId : null,
      'applicationId' in owner ? owner.applicationId : null,
      receiver.url(path),
      eventTypes,
      options.state ?? 'active',
      seal(secret),
      options.previous ? seal(options.previous.secret) : null,
      options.previous?.expiresAt ?? null,
    ],
  );
  return { id, secret, path };
}

/** An organizer of a new user (its owner), through the API. */
async function newOrganizer(): Promise<{ id: string; globalId: string; ownerToken: string; ownerId: string }> {
  const { user, token } = await createUserWithToken(t);
  const { id } = await createOrganizer(t, token);
  return { id: uuidOf(id), globalId: id, ownerToken: token, ownerId: user.id };
}

function uuidOf(globalId: string): string {
  return Buffer.from(globalId, 'base64url').toString('utf8').split(':')[1]!;
}

/** A domain event about a new registration (ids only: the fan-out reads no registration row for organizer endpoints). */
function registrationEvent(type: DomainEventType, organizerId: string, fields: Partial<DomainEvent> = {}): DomainEvent {
  return {
    type,
    occurredAt: t.clock.now().toISOString(),
    organizerId,
    eventId: randomUUID(),
    registrationId: randomUUID(),
    userId: randomUUID(),
    ...fields,
  };
}

/** What the events domain does with a change: the domain events written in its transaction. */
async function emit(...events: DomainEvent[]): Promise<void> {
  await db.transaction((tx) => t.get(WebhookOutbox).emit(tx, events));
}

/** The registration (or event) a delivered body is about. */
function subjectOf(request: ReceivedWebhook): string {
  const { data } = JSON.parse(request.body) as { data: { id: string } };
  return data.id;
}

interface DeliveryRow {
  id: string;
  state: string;
  attempts: number;
  next_attempt_at: Date | null;
  last_attempt_at: Date | null;
  body: string;
  message_id: string;
}

async function deliveriesOf(endpoint: Endpoint): Promise<DeliveryRow[]> {
  return db.query(
    `SELECT d.id, d.state, d.attempts, d.next_attempt_at, d.last_attempt_at, m.body, m.id AS message_id
       FROM webhook_deliveries d JOIN webhook_messages m ON m.id = d.message_id
      WHERE d.endpoint_id = $1 ORDER BY m.created_at, m.id`,
    [endpoint.id],
  );
}

async function attemptsOf(deliveryId: string) {
  return (await db.query(
    `SELECT number, trigger, started_at, outcome, response_status, response_body, error FROM webhook_attempts WHERE delivery_id = $1 ORDER BY number`,
    [deliveryId],
  )) as { number: number; trigger: string; started_at: Date; outcome: string; response_status: number | null; error: string | null }[];
}

describe('delivering the events domain’s outbox', () => {
  it('sends every event of a change to each subscribed endpoint, signed so that standardwebhooks verifies it, the same webhook-id to every endpoint', async () => {
    const organizer = await newOrganizer();
    const other = await newOrganizer();
    const registrations = await addEndpoint({ organizerId: organizer.id }, ['registration.created', 'registration.confirmed']);
    const confirmations = await addEndpoint({ organizerId: organizer.id }, ['registration.confirmed', 'event.cancelled']);
    const paused = await addEndpoint({ organizerId: organizer.id }, ['registration.created', 'registration.confirmed'], {
      state: 'paused',
    });
    const disabled = await addEndpoint({ organizerId: organizer.id }, ['registration.confirmed'], { state: 'disabled' });
    const elsewhere = await addEndpoint({ organizerId: other.id }, ['registration.created', 'registration.confirmed']);

    const created = registrationEvent('registration.created', organizer.id);
    const confirmed = { ...created, type: 'registration.confirmed' as const };
    const cancelled: DomainEvent = {
      type: 'event.cancelled',
      occurredAt: t.clock.now().toISOString(),
      organizerId: organizer.id,
      eventId: created.eventId,
    };
    await emit(created, confirmed, cancelled);

    await eventually(() => expect(receiver.at(registrations.path)).toHaveLength(2));
    await eventually(() => expect(receiver.at(confirmations.path)).toHaveLength(2));
    await webhooksSettled(t);
    for (const idle of [paused, disabled, elsewhere]) expect(receiver.at(idle.path)).toEqual([]);
    expect(await deliveriesOf(paused)).toEqual([]);

    for (const endpoint of [registrations, confirmations]) {
      for (const request of receiver.at(endpoint.path)) {
        expect(request.status).toBe(200);
        expect(request.headers['webhook-id']).toMatch(/^msg_[0-9a-f-]{36}$/);
        expect(request.headers['content-type']).toBe('application/json');
        expect(Math.abs(Number(request.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
        expect(verify(endpoint.secret, request)).toEqual(JSON.parse(request.body));
        // Another endpoint's secret does not verify it.
        const wrong = endpoint === registrations ? confirmations : registrations;
        expect(() => verify(wrong.secret, request)).toThrow(/No matching signature/);
      }
    }
    const types = (endpoint: Endpoint) => receiver.at(endpoint.path).map((r) => (JSON.parse(r.body) as { type: string }).type);
    expect(types(registrations).sort()).toEqual(['registration.confirmed', 'registration.created']);
    expect(types(confirmations).sort()).toEqual(['event.cancelled', 'registration.confirmed']);

    // One message per domain event: the confirmation is the same webhook-id and the same bytes at both endpoints.
    const confirmedAt = (endpoint: Endpoint) => receiver.at(endpoint.path).find((r) => r.body.includes('"registration.confirmed"'))!;
    expect(confirmedAt(registrations).headers['webhook-id']).toBe(confirmedAt(confirmations).headers['webhook-id']);
    expect(confirmedAt(registrations).body).toBe(confirmedAt(confirmations).body);
    expect(JSON.parse(confirmedAt(registrations).body)).toEqual({
      type: 'registration.confirmed',
      timestamp: created.occurredAt,
      data: {
        object: 'registration',
        id: toGlobalId('Registration', created.registrationId!),
        organizer_id: toGlobalId('Organizer', organizer.id),
        event_id: toGlobalId('Event', created.eventId),
        registration_id: toGlobalId('Registration', created.registrationId!),
        url: `${t.url}/api/registrations/${created.registrationId}`,
      },
    });

    // The delivery log: the exact body sent, one successful automatic attempt each.
    for (const endpoint of [registrations, confirmations]) {
      for (const delivery of await deliveriesOf(endpoint)) {
        expect(delivery).toMatchObject({ state: 'succeeded', attempts: 1, next_attempt_at: null });
        const request = receiver.at(endpoint.path).find((r) => r.headers['webhook-id'] === `msg_${delivery.message_id}`)!;
        expect(request.body).toBe(delivery.body);
        expect(await attemptsOf(delivery.id)).toEqual([
          expect.objectContaining({
            number: 1,
            trigger: 'automatic',
            outcome: 'succeeded',
            response_status: 200,
            response_body: 'ok',
            error: null,
          }),
        ]);
      }
    }
  });

  it('delivers a registration made through the GraphQL API: created, then confirmed, pointing at its REST address', async () => {
    const organizer = await newOrganizer();
    const endpoint = await addEndpoint({ organizerId: organizer.id }, ['registration.created', 'registration.confirmed']);
    const event = await createEvent(t, organizer.ownerToken, organizer.globalId);
    const attendee = await createUserWithToken(t);
    const registration = registrationOf(await registerFor(t, attendee.token, event));

    await eventually(() => expect(receiver.at(endpoint.path)).toHaveLength(2));
    const bodies = receiver
      .at(endpoint.path)
      .map((request) => verify(endpoint.secret, request) as { type: string; data: Record<string, string> });
    expect(bodies.map((b) => b.type).sort()).toEqual(['registration.confirmed', 'registration.created']);
    for (const body of bodies) {
      expect(body.data).toEqual({
        object: 'registration',
        id: registration.id,
        organizer_id: organizer.globalId,
        event_id: event.id,
        registration_id: registration.id,
        url: `${t.url}/api/registrations/${uuidOf(registration.id)}`,
      });
    }
  });

  it('sends nothing for a change whose transaction rolled back', async () => {
    const organizer = await newOrganizer();
    const endpoint = await addEndpoint({ organizerId: organizer.id }, ['registration.created']);
    const rolledBack = registrationEvent('registration.created', organizer.id);
    await expect(
      db.transaction(async (tx) => {
        await t.get(WebhookOutbox).emit(tx, [rolledBack]);
        throw new Error('the registration failed after emitting');
      }),
    ).rejects.toThrow('the registration failed after emitting');
    const committed = registrationEvent('registration.created', organizer.id);
    await emit(committed);

    await eventually(() => expect(receiver.at(endpoint.path)).toHaveLength(1));
    await webhooksSettled(t);
    expect(receiver.at(endpoint.path).map(subjectOf)).toEqual([toGlobalId('Registration', committed.registrationId!)]);
    const [{ jobs }] = await db.query(
      `SELECT count(*)::int AS jobs FROM pgboss.job WHERE name = 'webhook-fan-out' AND data::text LIKE $1`,
      [`%${rolledBack.registrationId}%`],
    );
    expect(jobs).toBe(0);
  });

  it('signs with both secrets during a rotation, so either verifies, and with the new one alone once the old one expired', async () => {
    const organizer = await newOrganizer();
    const oldSecret = newWebhookSecret();
    const endpoint = await addEndpoint({ organizerId: organizer.id }, ['registration.confirmed'], {
      previous: { secret: oldSecret, expiresAt: new Date(t.clock.now().getTime() + HOUR) },
    });
    await emit(registrationEvent('registration.confirmed', organizer.id));
    const [during] = await eventually(() => {
      expect(receiver.at(endpoint.path)).toHaveLength(1);
      return receiver.at(endpoint.path);
    });
    expect(during!.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(verify(endpoint.secret, during!)).toMatchObject({ type: 'registration.confirmed' });
    expect(verify(oldSecret, during!)).toMatchObject({ type: 'registration.confirmed' });

    t.clock.advance(HOUR + MINUTE);
    await emit(registrationEvent('registration.confirmed', organizer.id));
    await eventually(() => expect(receiver.at(endpoint.path)).toHaveLength(2));
    const after = receiver.at(endpoint.path)[1]!;
    expect(after.headers['webhook-signature']!.split(' ')).toHaveLength(1);
    expect(verify(endpoint.secret, after)).toMatchObject({ type: 'registration.confirmed' });
    expect(() => verify(oldSecret, after)).toThrow(/No matching signature/);
  });
});

describe('an application’s endpoints', () => {
  it('hear of what concerns the users who granted the application api or read_api: their registrations, their organizers’ events, the events they registered for', async () => {
    const { user: appOwner } = await createUserWithToken(t);
    const [application] = await db.query(
      `INSERT INTO oauth_applications (owner_id, name, client_id, client_type, client_secret_hash, redirect_uris, scopes)
       VALUES ($1, 'CRM sync', $2, 'confidential', $3, ARRAY['https://crm.example.com/callback'], ARRAY['openid', 'api', 'read_api'])
       RETURNING id`,
      [appOwner.id, `client-${randomUUID()}`, 'a'.repeat(64)],
    );
    const granted = await createUser(t);
    const openIdOnly = await createUser(t);
    const stranger = await createUser(t);
    const staff = await createUser(t);
    const attendee = await createUserWithToken(t);
    const grant = (userId: string, scopes: string[]) =>
      db.query(`INSERT INTO oauth_grants (user_id, application_id, scopes) VALUES ($1, $2, $3)`, [userId, application.id, scopes]);
    await grant(granted.id, ['openid', 'api']);
    await grant(openIdOnly.id, ['openid', 'profile']);
    await grant(staff.id, ['read_api']);
    await grant(attendee.user.id, ['api']);

    // staffed: an organizer one of whose members (check-in staff) granted it; plain: none did.
    const staffed = await newOrganizer();
    await db.query(`INSERT INTO organizer_members (organizer_id, user_id, role) VALUES ($1, $2, 'check_in_staff')`, [staffed.id, staff.id]);
    const plain = await newOrganizer();
    const event = await createEvent(t, plain.ownerToken, plain.globalId);
    registrationOf(await registerFor(t, attendee.token, event));
    const eventId = uuidOf(event.id);

    const types: DomainEventType[] = ['registration.confirmed', 'event.changed', 'event.cancelled'];
    const endpoint = await addEndpoint({ applicationId: application.id }, types);
    const organizerEndpoint = await addEndpoint({ organizerId: plain.id }, types);

    const heard = {
      own: registrationEvent('registration.confirmed', plain.id, { userId: granted.id }),
      organizers: registrationEvent('registration.confirmed', staffed.id, { userId: stranger.id }),
    };
    const unheard = {
      openIdOnly: registrationEvent('registration.confirmed', plain.id, { userId: openIdOnly.id }),
      stranger: registrationEvent('registration.confirmed', plain.id, { userId: stranger.id }),
    };
    const cancelled: DomainEvent = { type: 'event.cancelled', occurredAt: t.clock.now().toISOString(), organizerId: plain.id, eventId };
    const changedElsewhere: DomainEvent = {
      type: 'event.changed',
      occurredAt: t.clock.now().toISOString(),
      organizerId: plain.id,
      eventId: randomUUID(),
    };
    await emit(heard.own, heard.organizers, unheard.openIdOnly, unheard.stranger, cancelled, changedElsewhere);
    await eventually(() => expect(receiver.at(organizerEndpoint.path).length).toBeGreaterThanOrEqual(5));
    await webhooksSettled(t);

    const mine = new Set([...Object.values(heard), ...Object.values(unheard)].map((e) => toGlobalId('Registration', e.registrationId!)));
    const subjects = (at: Endpoint) =>
      receiver
        .at(at.path)
        .map(subjectOf)
        .filter((id) => mine.has(id) || id === toGlobalId('Event', eventId) || id === toGlobalId('Event', changedElsewhere.eventId));
    expect(subjects(endpoint).sort()).toEqual(
      [
        toGlobalId('Registration', heard.own.registrationId!),
        toGlobalId('Registration', heard.organizers.registrationId!),
        toGlobalId('Event', eventId),
      ].sort(),
    );
    // The organizer's own endpoint hears of everything of its organizer.
    expect(subjects(organizerEndpoint)).toHaveLength(5);
    for (const request of receiver.at(endpoint.path)) verify(endpoint.secret, request);
  });
});

describe('an application’s endpoint, disabled', () => {
  it('tells the application’s owner, once, and no one when the owner is blocked', async () => {
    const disabledMails = (email: string) =>
      smtp.arrivals.filter((a) => a.to.includes(email) && /^Webhook endpoint disabled/.test(a.mail.subject ?? '')).map((a) => a.mail);
    const organizer = await newOrganizer();
    const setUp = async (ownerState: 'active' | 'blocked') => {
      const { user: owner } = await createUserWithToken(t);
      const [application] = await db.query(
        `INSERT INTO oauth_applications (owner_id, name, client_id, client_type, client_secret_hash, redirect_uris, scopes)
         VALUES ($1, $2, $3, 'confidential', $4, ARRAY['https://crm.example.com/callback'], ARRAY['api'])
         RETURNING id`,
        [owner.id, `Sync ${ownerState}`, `client-${randomUUID()}`, 'a'.repeat(64)],
      );
      const granted = await createUser(t);
      await db.query(`INSERT INTO oauth_grants (user_id, application_id, scopes) VALUES ($1, $2, ARRAY['api'])`, [
        granted.id,
        application.id,
      ]);
      const endpoint = await addEndpoint({ applicationId: application.id }, ['registration.confirmed']);
      statusOf.set(endpoint.path, 500);
      // Failing without a break for 73 hours, the last failure an hour ago: the next failure disables it.
      const now = t.clock.now().getTime();
      await db.query(`UPDATE webhook_endpoints SET failing_since = $2, last_failed_at = $3 WHERE id = $1`, [
        endpoint.id,
        new Date(now - 73 * HOUR),
        new Date(now - HOUR),
      ]);
      if (ownerState === 'blocked') await db.query(`UPDATE users SET state = 'blocked' WHERE id = $1`, [owner.id]);
      return { owner, granted, endpoint, name: `Sync ${ownerState}` };
    };
    const active = await setUp('active');
    const blocked = await setUp('blocked');
    await emit(
      registrationEvent('registration.confirmed', organizer.id, { userId: active.granted.id }),
      registrationEvent('registration.confirmed', organizer.id, { userId: blocked.granted.id }),
    );
    for (const { endpoint } of [active, blocked]) {
      await eventually(async () => {
        const [row] = await db.query(`SELECT state FROM webhook_endpoints WHERE id = $1`, [endpoint.id]);
        expect(row.state).toBe('disabled');
      });
    }
    await eventually(() => expect(disabledMails(active.owner.email)).toHaveLength(1));
    const mail = disabledMails(active.owner.email)[0]!;
    expect(mail.subject).toBe(`Webhook endpoint disabled: ${receiver.url(active.endpoint.path)}`);
    expect(mail.text).toContain(active.name);
    await webhooksSettled(t);
    expect(disabledMails(blocked.owner.email)).toHaveLength(0);
  }, 60_000);
});

describe('a receiver that fails', () => {
  it('is retried on the documented schedule while down (503, then refused), and gets every event once it is back, each webhook-id once', async () => {
    const organizer = await newOrganizer();
    const endpoint = await addEndpoint({ organizerId: organizer.id }, ['registration.created', 'registration.confirmed']);
    statusOf.set(endpoint.path, 503);
    const events = [
      registrationEvent('registration.created', organizer.id),
      registrationEvent('registration.confirmed', organizer.id),
      registrationEvent('registration.created', organizer.id),
    ];
    await emit(events[0]!, events[1]!);
    await emit(events[2]!);

    const settled = async (count: number) =>
      eventually(async () => {
        const deliveries = await deliveriesOf(endpoint);
        expect(deliveries.map((d) => [d.state, d.attempts])).toEqual(Array(3).fill(['scheduled', count]));
        return deliveries;
      });
    // Attempt 1 failed: the next is due a minute later.
    for (const delivery of await settled(1)) {
      const wait = delivery.next_attempt_at!.getTime() - delivery.last_attempt_at!.getTime();
      expect(wait).toBeGreaterThanOrEqual(MINUTE);
      expect(wait).toBeLessThan(MINUTE + 5000);
    }
    expect(receiver.at(endpoint.path)).toHaveLength(3);
    t.clock.advance(MINUTE - 6000);
    await webhooksSettled(t); // the sweeper looked: nothing is due yet
    expect(receiver.at(endpoint.path)).toHaveLength(3);
    t.clock.advance(6000);
    await eventually(() => expect(receiver.at(endpoint.path)).toHaveLength(6));
    await settled(2);

    // Down: connections refused.
    await receiver.down();
    t.clock.advance(5 * MINUTE);
    await settled(3);
    await receiver.up();
    statusOf.delete(endpoint.path);
    t.clock.advance(30 * MINUTE);
    await eventually(async () =>
      expect((await deliveriesOf(endpoint)).map((d) => [d.state, d.attempts])).toEqual(Array(3).fill(['succeeded', 4])),
    );

    const requests = receiver.at(endpoint.path);
    expect(requests).toHaveLength(9); // attempts 1, 2 and 4 of each; the third found the port closed
    for (const request of requests) verify(endpoint.secret, request);
    const unique = deduplicated(requests);
    expect(unique.map(subjectOf).sort()).toEqual(events.map((e) => toGlobalId('Registration', e.registrationId!)).sort());
    for (const delivery of await deliveriesOf(endpoint)) {
      const same = requests.filter((r) => r.headers['webhook-id'] === `msg_${delivery.message_id}`);
      expect(same.map((r) => r.status)).toEqual([503, 503, 200]);
      expect(new Set(same.map((r) => r.body))).toEqual(new Set([delivery.body]));

      const attempts = await attemptsOf(delivery.id);
      expect(attempts.map((a) => [a.number, a.trigger, a.outcome, a.response_status])).toEqual([
        [1, 'automatic', 'failed', 503],
        [2, 'automatic', 'failed', 503],
        [3, 'automatic', 'failed', null],
        [4, 'automatic', 'succeeded', 200],
      ]);
      expect(attempts[2]!.error).toBeTruthy();
      // Spaced as documented: 1 min, 5 min, 30 min (and the moments it took to notice and post).
      const gaps = attempts.slice(1).map((a, i) => a.started_at.getTime() - attempts[i]!.started_at.getTime());
      [MINUTE, 5 * MINUTE, 30 * MINUTE].forEach((delay, i) => {
        expect(gaps[i]).toBeGreaterThanOrEqual(delay);
        expect(gaps[i]).toBeLessThan(delay + 8000);
      });
    }
    const [{ failing_since }] = await db.query(`SELECT failing_since FROM webhook_endpoints WHERE id = $1`, [endpoint.id]);
    expect(failing_since).toBeNull();
  }, 60_000);

  it('gives up after the ninth attempt, about three days after the first', async () => {
    const organizer = await newOrganizer();
    const endpoint = await addEndpoint({ organizerId: organizer.id }, ['registration.created']);
    statusOf.set(endpoint.path, 500);
    await emit(registrationEvent('registration.created', organizer.id));
    // 68.6 hours from the first attempt to the ninth: short of the 72 hours that disable an endpoint.
    for (let attempt = 1; attempt <= 9; attempt++) {
      const [delivery] = await eventually(async () => {
        const rows = await deliveriesOf(endpoint);
        expect(rows[0]).toMatchObject({ attempts: attempt, state: attempt < 9 ? 'scheduled' : 'failed' });
        return rows;
      });
      if (attempt < 9) t.clock.advance(delivery!.next_attempt_at!.getTime() - t.clock.now().getTime() + 10);
      else expect(delivery!.next_attempt_at).toBeNull();
    }
    expect(receiver.at(endpoint.path)).toHaveLength(9);
  }, 60_000);

  it('is disabled after failing for 72 hours: its waiting deliveries fail, its owners and admins get an e-mail, new events skip it', async () => {
    const organizer = await newOrganizer();
    const admin = await createUser(t);
    const staff = await createUser(t);
    await db.query(`INSERT INTO organizer_members (organizer_id, user_id, role) VALUES ($1, $2, 'admin'), ($1, $3, 'check_in_staff')`, [
      organizer.id,
      admin.id,
      staff.id,
    ]);
    const [owner] = await db.query(`SELECT email FROM users WHERE id = $1`, [organizer.ownerId]);
    const endpoint = await addEndpoint({ organizerId: organizer.id }, ['registration.created']);
    statusOf.set(endpoint.path, 500);
    const firstAt = t.clock.now().getTime();
    await emit(registrationEvent('registration.created', organizer.id), registrationEvent('registration.created', organizer.id));
    // Every retry of both fails, on schedule: nine attempts over 68.6 hours, the endpoint still active after them.
    for (let attempt = 1; attempt <= 9; attempt++) {
      const rows = await eventually(async () => {
        const found = await deliveriesOf(endpoint);
        expect(found.map((d) => [d.state, d.attempts])).toEqual(Array(2).fill([attempt < 9 ? 'scheduled' : 'failed', attempt]));
        return found;
      });
      if (attempt < 9) t.clock.advance(Math.max(...rows.map((d) => d.next_attempt_at!.getTime())) - t.clock.now().getTime() + 10);
    }
    const [active] = await db.query(`SELECT state FROM webhook_endpoints WHERE id = $1`, [endpoint.id]);
    expect(active.state).toBe('active');

    // 73 hours after the first failure, a new message fails too: failing without a break for more than 72 hours.
    t.clock.advance(firstAt + 73 * HOUR - t.clock.now().getTime());
    await emit(registrationEvent('registration.created', organizer.id));
    const [disabled] = await eventually(async () => {
      const rows = await db.query(`SELECT state, disabled_reason, disabled_at FROM webhook_endpoints WHERE id = $1`, [endpoint.id]);
      expect(rows[0].state).toBe('disabled');
      return rows;
    });
    expect(disabled.disabled_reason).toMatch(/failed for more than 72 hours.*HTTP 500/);
    await eventually(async () => {
      for (const delivery of await deliveriesOf(endpoint)) expect(['failed', 'skipped']).toContain(delivery.state);
    });

    const disabledMails = (email: string) =>
      smtp.arrivals.filter((a) => a.to.includes(email) && /^Webhook endpoint disabled/.test(a.mail.subject ?? '')).map((a) => a.mail);
    await eventually(() => {
      expect(disabledMails(owner.email)).toHaveLength(1);
      expect(disabledMails(admin.email)).toHaveLength(1);
    });
    const mail = disabledMails(admin.email)[0]!;
    expect(mail.subject).toBe(`Webhook endpoint disabled: ${receiver.url(endpoint.path)}`);
    expect(mail.text).toContain('72 hours');
    expect(mail.text).toContain(`${t.url}/webhooks/${endpoint.id}`);

    await emit(registrationEvent('registration.created', organizer.id));
    await webhooksSettled(t);
    expect(disabledMails(staff.email)).toHaveLength(0);
    expect(await deliveriesOf(endpoint)).toHaveLength(3);
  }, 90_000);
});

describe('test events and redelivery', () => {
  it('sends a test event now, signed, once even when it fails', async () => {
    const organizer = await newOrganizer();
    const working = await addEndpoint({ organizerId: organizer.id }, ['event.published']);
    const broken = await addEndpoint({ organizerId: organizer.id }, ['event.published'], { state: 'paused' });
    statusOf.set(broken.path, 500);

    const deliveryId = await t.get(WebhookDispatch).sendTest(working.id);
    const failingId = await t.get(WebhookDispatch).sendTest(broken.id);
    await eventually(() => expect(receiver.at(working.path)).toHaveLength(1));
    expect(verify(working.secret, receiver.at(working.path)[0]!)).toEqual({
      type: 'webhook.test',
      timestamp: expect.any(String),
      data: { endpoint_id: working.id, message: expect.stringMatching(/test event/) },
    });
    await eventually(async () =>
      expect((await deliveriesOf(working))[0]).toMatchObject({ id: deliveryId, state: 'succeeded', attempts: 1 }),
    );
    expect((await attemptsOf(deliveryId)).map((a) => a.trigger)).toEqual(['test']);

    // A paused endpoint still gets the test its manager asked for; a failed test is not retried.
    await eventually(async () =>
      expect((await deliveriesOf(broken))[0]).toMatchObject({ id: failingId, state: 'failed', attempts: 1, next_attempt_at: null }),
    );
    t.clock.advance(10 * MINUTE);
    await webhooksSettled(t);
    expect(receiver.at(broken.path)).toHaveLength(1);

    // The job run again (its completion lost) records nothing twice and sends nothing.
    await t.get(WebhookAttempts).attempt({ deliveryId, number: 1, trigger: 'test' });
    expect(receiver.at(working.path)).toHaveLength(1);
    expect(await attemptsOf(deliveryId)).toHaveLength(1);
  });

  it('redelivers a delivery with the same webhook-id, without restarting its retry schedule', async () => {
    const organizer = await newOrganizer();
    const endpoint = await addEndpoint({ organizerId: organizer.id }, ['registration.created']);
    statusOf.set(endpoint.path, 503);
    await emit(registrationEvent('registration.created', organizer.id));
    const [waiting] = await eventually(async () => {
      const rows = await deliveriesOf(endpoint);
      expect(rows[0]).toMatchObject({ state: 'scheduled', attempts: 1 });
      return rows;
    });

    // Still failing: the delivery waits for its next automatic attempt at the same time as before.
    await t.get(WebhookDispatch).redeliver(waiting!.id);
    await eventually(async () => expect((await deliveriesOf(endpoint))[0]).toMatchObject({ state: 'scheduled', attempts: 2 }));
    expect((await deliveriesOf(endpoint))[0]!.next_attempt_at).toEqual(waiting!.next_attempt_at);

    statusOf.delete(endpoint.path);
    await t.get(WebhookDispatch).redeliver(waiting!.id);
    await eventually(async () =>
      expect((await deliveriesOf(endpoint))[0]).toMatchObject({ state: 'succeeded', attempts: 3, next_attempt_at: null }),
    );
    // And again, after it succeeded: one more attempt, asked for.
    await t.get(WebhookDispatch).redeliver(waiting!.id);
    await eventually(async () => expect((await deliveriesOf(endpoint))[0]).toMatchObject({ state: 'succeeded', attempts: 4 }));

    const requests = receiver.at(endpoint.path);
    expect(requests.map((r) => r.status)).toEqual([503, 503, 200, 200]);
    expect(new Set(requests.map((r) => r.headers['webhook-id']))).toEqual(new Set([`msg_${waiting!.message_id}`]));
    for (const request of requests) verify(endpoint.secret, request);
    expect((await attemptsOf(waiting!.id)).map((a) => a.trigger)).toEqual(['automatic', 'redelivery', 'redelivery', 'redelivery']);
    t.clock.advance(10 * MINUTE);
    await webhooksSettled(t);
    expect(receiver.at(endpoint.path)).toHaveLength(4);
  });

  it('records a failed attempt, and sends nothing, when the endpoint’s secret cannot be unsealed (SECRET_KEY replaced)', async () => {
    const organizer = await newOrganizer();
    const endpoint = await addEndpoint({ organizerId: organizer.id }, ['registration.created']);
    await db.query(`UPDATE webhook_endpoints SET secret_sealed = $2 WHERE id = $1`, [
      endpoint.id,
      sealWebhookSecret('another-secret-key-than-this-servers-0123456789', endpoint.secret),
    ]);
    const deliveryId = await t.get(WebhookDispatch).sendTest(endpoint.id);
    await eventually(async () => expect((await deliveriesOf(endpoint))[0]).toMatchObject({ state: 'failed', attempts: 1 }));
    expect((await attemptsOf(deliveryId))[0]).toMatchObject({
      outcome: 'failed',
      response_status: null,
      error: expect.stringMatching(/secret/),
    });
    expect(receiver.at(endpoint.path)).toEqual([]);
  });

  it('adds nothing when a fan-out job runs again', async () => {
    const organizer = await newOrganizer();
    const endpoint = await addEndpoint({ organizerId: organizer.id }, ['registration.created']);
    const job = { id: randomUUID(), retryCount: 0 };
    const data = { events: [registrationEvent('registration.created', organizer.id)] };
    expect(await t.get(WebhookFanOutHandler).fanOut(data, job)).toEqual({ deliveries: 1 });
    expect(await t.get(WebhookFanOutHandler).fanOut(data, { ...job, retryCount: 1 })).toEqual({ deliveries: 0 });
    await eventually(() => expect(receiver.at(endpoint.path)).toHaveLength(1));
    await webhooksSettled(t);
    expect(receiver.at(endpoint.path)).toHaveLength(1);
    expect(await deliveriesOf(endpoint)).toHaveLength(1);
  });
});

describe('what operators see', () => {
  it('counts attempts, their duration, endpoints by state and the deliveries due in /metrics', async () => {
    const res = await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(res.status).toBe(200);
    const text = await res.text();
    const value = (series: string) => Number(new RegExp(`^${series.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1]);
    expect(value('agora_webhook_deliveries_total{outcome="succeeded",trigger="automatic"}')).toBeGreaterThan(10);
    expect(value('agora_webhook_deliveries_total{outcome="failed",trigger="automatic"}')).toBeGreaterThan(10);
    expect(value('agora_webhook_deliveries_total{outcome="succeeded",trigger="redelivery"}')).toBe(2);
    expect(value('agora_webhook_deliveries_total{outcome="failed",trigger="test"}')).toBe(2); // a receiver answering 500, a secret that does not unseal
    expect(value('agora_webhook_attempt_duration_seconds_count')).toBeGreaterThan(20);
    expect(value('agora_webhook_endpoints{state="disabled"}')).toBe(4); // one inserted so, three disabled by the service (an organizer's, two applications')
    expect(value('agora_webhook_endpoints{state="paused"}')).toBe(2);
    expect(value('agora_webhook_endpoints{state="active"}')).toBeGreaterThan(10);
    expect(value('agora_webhooks_due')).toBe(0);
  });

  it('keeps the delivery log 30 days: housekeeping deletes older messages with their deliveries and attempts', async () => {
    const [{ before }] = await db.query(`SELECT count(*)::int AS before FROM webhook_messages`);
    expect(before).toBeGreaterThan(10);
    t.clock.advance(30 * 24 * HOUR + HOUR);
    const organizer = await newOrganizer();
    const endpoint = await addEndpoint({ organizerId: organizer.id }, ['registration.created']);
    const recent = await t.get(WebhookDispatch).sendTest(endpoint.id);
    await eventually(async () => expect((await deliveriesOf(endpoint))[0]).toMatchObject({ state: 'succeeded' }));

    const purged = await t.get(HousekeepingService).run();
    expect(purged?.webhookMessages).toBe(before);
    const [left] = await db.query(
      `SELECT (SELECT count(*)::int FROM webhook_messages) AS messages, (SELECT count(*)::int FROM webhook_deliveries) AS deliveries,
              (SELECT count(*)::int FROM webhook_attempts WHERE delivery_id <> $1) AS other_attempts`,
      [recent],
    );
    expect(left).toEqual({ messages: 1, deliveries: 1, other_attempts: 0 });
  });
});
