import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { DataSource } from 'typeorm';
import type { DomainEvent } from '../src/events/domain-events.js';
import { WebhookOutbox } from '../src/events/webhook-outbox.js';
import { newWebhookSecret, sealWebhookSecret } from '../src/webhooks/webhook-secrets.js';
import { createOrganizer } from './support/events.js';
import { createUserWithToken } from './support/fixtures.js';
import { startTestApp, type TestApp } from './support/test-app.js';

// A receiver that never answers holds its attempts for the whole 10 s timeout. Attempts run
// WEBHOOKS_CONCURRENCY at once (25), apart from the other jobs' JOBS_CONCURRENCY (5): eight hanging
// deliveries to one endpoint must not hold back another endpoint's delivery behind them.

let t: TestApp;
let db: DataSource;
let hanging: Server;
let answering: Server;
const held = new Set<Socket>();
/** For each delivery the answering endpoint got: how many of the hanging attempts were still waiting then. */
const arrivals: number[] = [];

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
}

beforeAll(async () => {
  hanging = createServer((request) => {
    held.add(request.socket);
    request.resume(); // read the body, never answer
  });
  answering = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      arrivals.push([...held].filter((socket) => !socket.destroyed).length);
      response.writeHead(204).end();
    });
  });
  t = await startTestApp({ WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOKS_ALLOW_HTTP: 'true' });
  db = t.get(DataSource);
}, 60_000);

afterAll(async () => {
  for (const socket of held) socket.destroy();
  await t?.close();
  for (const server of [hanging, answering]) {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  }
});

async function addEndpoint(organizerId: string, url: string, eventTypes: string[]): Promise<void> {
  await db.query(
    `INSERT INTO webhook_endpoints (id, organizer_id, url, event_types, secret_sealed, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, now(), now())`,
    [randomUUID(), organizerId, url, eventTypes, sealWebhookSecret(t.config.secretKey!, newWebhookSecret())],
  );
}

const pause = () => new Promise((resolve) => setTimeout(resolve, 50));

it('delivers to an answering endpoint while eight attempts wait on one that never answers', async () => {
  const { token } = await createUserWithToken(t);
  const { id } = await createOrganizer(t, token);
  const organizerId = Buffer.from(id, 'base64url').toString('utf8').split(':')[1]!;
  await addEndpoint(organizerId, await listen(hanging), ['registration.created']);
  await addEndpoint(organizerId, await listen(answering), ['event.published']);
  const event = (type: DomainEvent['type']): DomainEvent => ({
    type,
    occurredAt: t.clock.now().toISOString(),
    organizerId,
    eventId: randomUUID(),
    ...(type.startsWith('registration.') && { registrationId: randomUUID(), userId: randomUUID() }),
  });

  await db.transaction((tx) =>
    t.get(WebhookOutbox).emit(
      tx,
      Array.from({ length: 8 }, () => event('registration.created')),
    ),
  );
  const heldBy = Date.now() + 8000;
  while (held.size < 8 && Date.now() < heldBy) await pause();
  expect(held.size).toBe(8); // all eight attempts in flight at once

  await db.transaction((tx) => t.get(WebhookOutbox).emit(tx, [event('event.published')]));
  const arrivedBy = Date.now() + 20_000;
  while (arrivals.length === 0 && Date.now() < arrivedBy) await pause();
  // It arrived while all eight were still waiting on the other receiver: it did not wait for a slot.
  expect(arrivals).toEqual([8]);
}, 60_000);
