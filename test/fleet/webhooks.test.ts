import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { idOfType } from '../../src/graphql/global-id.js';
import { newWebhookSecret, sealWebhookSecret } from '../../src/webhooks/webhook-secrets.js';
import { insertPeople, localTcpPorts, organizerWithEvents, Person, register, waitUntil } from '../support/mail-flows.js';
import { ServerProcess, startServer, waitForHttp } from '../support/processes.js';
import { freePort } from '../support/test-app.js';
import { deduplicated, verify, WebhookReceiver } from '../support/webhook-receiver.js';
import { FLEET_SECRET_KEY, requireAdminUrl, scratchDatabase, ScratchDatabase, startFleet } from './fleet.js';

// Webhook deliveries from real server processes on PostgreSQL: a process killed (SIGKILL) with a
// delivery in flight and another committed but never attempted, and two instances delivering the same
// endpoints and sweeping the same due retries. Every event arrives, once per endpoint after the
// receiver's deduplication by webhook-id (at least once on the wire).

function webhookEnv(db: ScratchDatabase, dataDir: string): Record<string, string> {
  return {
    DATABASE_URL: db.url,
    SECRET_KEY: FLEET_SECRET_KEY,
    DATA_DIR: dataDir,
    ATTENDEE_MAIL: 'false',
    WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOKS_ALLOW_HTTP: 'true',
    JOBS_RETRY_DELAY_SECONDS: '1',
    DATABASE_POOL_SIZE: '4',
    LOG_LEVEL: 'info',
  };
}

interface Endpoint {
  id: string;
  secret: string;
  path: string;
}

/** An organizer's endpoint on the receiver, stored as the management service stores one. */
async function addEndpoint(db: ScratchDatabase, receiver: WebhookReceiver, organizerId: string, eventTypes: string[]): Promise<Endpoint> {
  const id = randomUUID();
  const secret = newWebhookSecret();
  const path = `/hooks/${id}`;
  await db.query(
    `INSERT INTO webhook_endpoints (id, organizer_id, url, event_types, secret_sealed, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, now(), now())`,
    [id, organizerId, receiver.url(path), eventTypes, sealWebhookSecret(FLEET_SECRET_KEY, secret)],
  );
  return { id, secret, path };
}

async function organizerOf(db: ScratchDatabase, event: { id: string }): Promise<string> {
  const [row] = await db.query<{ organizer_id: string }>(`SELECT organizer_id FROM events WHERE id = $1`, [idOfType(event.id, 'Event')]);
  return row!.organizer_id;
}

/** The confirmations' deliveries to the endpoint, each with the registration it is about. */
async function confirmations(db: ScratchDatabase, endpoint: Endpoint) {
  const rows = await db.query<{ id: string; state: string; attempts: number; message_id: string; body: string }>(
    `SELECT d.id, d.state, d.attempts, m.id AS message_id, m.body
       FROM webhook_deliveries d JOIN webhook_messages m ON m.id = d.message_id
      WHERE d.endpoint_id = $1 AND m.event_type = 'registration.confirmed'`,
    [endpoint.id],
  );
  return rows.map(({ body, ...row }) => ({
    ...row,
    registration: idOfType((JSON.parse(body) as { data: { registration_id: string } }).data.registration_id, 'Registration')!,
  }));
}

describe('a server process killed (SIGKILL) with webhook deliveries committed', () => {
  let db: ScratchDatabase;
  let receiver: WebhookReceiver;
  let dataDir: string;
  const servers: ServerProcess[] = [];

  beforeAll(async () => {
    db = await scratchDatabase(requireAdminUrl(), 'agora_fleet_webhooks');
    receiver = await WebhookReceiver.start();
    dataDir = mkdtempSync(join(tmpdir(), 'agora-webhooks-'));
  });
  afterAll(async () => {
    for (const server of servers) if (server.child.exitCode === null) server.child.kill('SIGKILL');
    await Promise.all(servers.map((s) => s.exited));
    await receiver?.close();
    await db?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function start(extra: Record<string, string> = {}): Promise<{ server: ServerProcess; url: string }> {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const server = startServer({ ...webhookEnv(db, dataDir), HOST: '127.0.0.1', PORT: String(port), BASE_URL: url, ...extra });
    servers.push(server);
    await waitForHttp(`${url}/readyz`, server, 120_000);
    return { server, url };
  }

  it('delivers both after a restart: the attempt in flight (expired, sent again) and the one never attempted, each webhook-id once after deduplication', async () => {
    // One attempt at a time in the first process: while Ann's hangs, Bob's waits its turn.
    const first = await start({ JOBS_CONCURRENCY: '1' });
    const [owner, ann, bob] = (await insertPeople(db.query, 3)) as [Person, Person, Person];
    const [event] = await organizerWithEvents(first.url, owner, 1);
    const endpoint = await addEndpoint(db, receiver, await organizerOf(db, event!), ['registration.confirmed']);

    receiver.stallNext(1);
    const annRegistration = await register(first.url, ann, event!);
    await waitUntil(
      () => receiver.held === 1,
      20_000,
      () => 'no attempt in flight',
    );
    const bobRegistration = await register(first.url, bob, event!);
    await waitUntil(
      async () => (await confirmations(db, endpoint)).length === 2,
      8_000,
      () => 'Bob’s delivery was not created',
    );

    // Within the attempt's 10 s: Ann's request is with the receiver, unanswered; Bob's is queued.
    first.server.child.kill('SIGKILL');
    expect(await first.server.exited).toBeNull();
    const byRegistration = async () => new Map((await confirmations(db, endpoint)).map((d) => [d.registration, d]));
    const killed = await byRegistration();
    expect(killed.get(annRegistration)).toMatchObject({ state: 'queued', attempts: 0 });
    expect(killed.get(bobRegistration)).toMatchObject({ state: 'queued', attempts: 0 });
    expect(receiver.received).toHaveLength(0);

    const restartedAt = Date.now();
    const second = await start();
    const arrivedAfter: Record<string, number> = {};
    await waitUntil(
      async () => {
        for (const delivery of (await byRegistration()).values())
          if (delivery.state === 'succeeded' && arrivedAfter[delivery.registration] === undefined)
            arrivedAfter[delivery.registration] = Date.now() - restartedAt;
        return Object.keys(arrivedAfter).length === 2;
      },
      70_000,
      () => `delivered: ${JSON.stringify(arrivedAfter)}\n${second.server.output().slice(-3000)}`,
    );
    console.log(`after SIGKILL: deliveries succeeded ${JSON.stringify(arrivedAfter)} ms after the restart`);
    // Never attempted: taken as soon as the new process polls. In flight: once its job expired (30 s).
    expect(arrivedAfter[bobRegistration]).toBeLessThan(20_000);
    expect(arrivedAfter[annRegistration]).toBeLessThan(60_000);

    // On the wire: Ann's message twice (the hung request, then the one answered), Bob's once; each verifies.
    expect(receiver.held).toBe(1);
    const requests = receiver.at(endpoint.path);
    for (const request of requests) verify(endpoint.secret, request);
    const delivered = await byRegistration();
    expect(
      deduplicated(requests)
        .map((r) => r.headers['webhook-id'])
        .sort(),
    ).toEqual([...delivered.values()].map((d) => `msg_${d.message_id}`).sort());
    expect(requests).toHaveLength(2);
    for (const delivery of delivered.values()) expect(delivery).toMatchObject({ state: 'succeeded', attempts: 1 });

    second.server.child.kill('SIGTERM');
    expect(await second.server.exited).toBe(0);
  }, 150_000);
});

describe('two instances on one database', () => {
  let db: ScratchDatabase;
  let receiver: WebhookReceiver;
  let dataDir: string;
  let stop: (() => Promise<(number | null)[]>) | undefined;

  beforeAll(async () => {
    db = await scratchDatabase(requireAdminUrl(), 'agora_fleet_webhooks');
    receiver = await WebhookReceiver.start();
    dataDir = mkdtempSync(join(tmpdir(), 'agora-webhooks-'));
  });
  afterAll(async () => {
    await stop?.();
    await receiver?.close();
    await db?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('deliver every event once per endpoint, from both processes, and sweep the same due retries without sending one twice', async () => {
    const fleet = await startFleet(db.url, 2, webhookEnv(db, dataDir));
    stop = fleet.stop;
    const [owner, ...people] = await insertPeople(db.query, 41);
    const events = await organizerWithEvents(fleet.instances[0]!.url, owner!, 4);
    const organizerId = await organizerOf(db, events[0]!);
    const endpoints = [
      await addEndpoint(db, receiver, organizerId, ['registration.confirmed']),
      await addEndpoint(db, receiver, organizerId, ['registration.created', 'registration.confirmed']),
    ];

    const pids = fleet.instances.map((instance) => instance.server.child.pid!);
    const processOfPort = new Map<number, number>();
    const notePorts = () => {
      for (const pid of pids) for (const port of localTcpPorts(pid)) processOfPort.set(port, pid);
    };
    // Which process holds the connection a request came on, looked up while it is open (before the answer).
    receiver.answer(() => {
      notePorts();
      return 200;
    });
    for (let i = 0; i < people.length; i += 10) {
      await Promise.all(
        people.slice(i, i + 10).map((person, j) => register(fleet.instances[(i + j) % 2]!.url, person, events[(i + j) % events.length]!)),
      );
      notePorts();
    }
    const confirmedAt = (endpoint: Endpoint) => receiver.at(endpoint.path).filter((r) => r.body.includes('"registration.confirmed"'));
    await waitUntil(
      () => {
        notePorts();
        return endpoints.every((endpoint) => confirmedAt(endpoint).length >= people.length);
      },
      60_000,
      () => endpoints.map((e) => `${confirmedAt(e).length} of ${people.length}`).join(', '),
    );
    await new Promise((resolve) => setTimeout(resolve, 1500));

    for (const endpoint of endpoints) {
      const requests = confirmedAt(endpoint);
      // Not one sent twice: as many requests as events, each webhook-id once.
      expect(requests).toHaveLength(people.length);
      expect(new Set(requests.map((r) => r.headers['webhook-id'])).size).toBe(people.length);
      for (const request of requests) verify(endpoint.secret, request);
    }
    // One message per event: the same webhook-ids at both endpoints.
    const ids = (endpoint: Endpoint) =>
      confirmedAt(endpoint)
        .map((r) => r.headers['webhook-id'])
        .sort();
    expect(ids(endpoints[0]!)).toEqual(ids(endpoints[1]!));
    const senders = new Set(receiver.received.map((r) => processOfPort.get(r.remotePort)).filter((pid) => pid !== undefined));
    expect(senders.size).toBe(2);

    // Every confirmation to the first endpoint due for a retry at once: both sweepers take them, none twice.
    const [{ count: due }] = await db.query<{ count: number }>(
      `WITH due AS (UPDATE webhook_deliveries d SET state = 'scheduled', next_attempt_at = now()
                      FROM webhook_messages m WHERE m.id = d.message_id AND d.endpoint_id = $1 AND m.event_type = 'registration.confirmed'
                    RETURNING 1)
       SELECT count(*)::int AS count FROM due`,
      [endpoints[0]!.id],
    );
    expect(due).toBe(people.length);
    await waitUntil(
      async () => (await confirmations(db, endpoints[0]!)).every((d) => d.state === 'succeeded' && d.attempts === 2),
      30_000,
      () => `${confirmedAt(endpoints[0]!).length} requests`,
    );
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const requests = confirmedAt(endpoints[0]!);
    expect(requests).toHaveLength(2 * people.length);
    const perId = new Map<string, number>();
    for (const request of requests) perId.set(request.headers['webhook-id']!, (perId.get(request.headers['webhook-id']!) ?? 0) + 1);
    expect(new Set(perId.values())).toEqual(new Set([2]));
    const [{ attempts }] = await db.query<{ attempts: number }>(
      `SELECT count(*)::int AS attempts FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.endpoint_id = $1`,
      [endpoints[0]!.id],
    );
    expect(attempts).toBe(2 * people.length);
  }, 150_000);
});
