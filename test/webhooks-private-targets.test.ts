import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { WebhookDispatch } from '../src/webhooks/webhook-dispatch.js';
import { newWebhookSecret, sealWebhookSecret } from '../src/webhooks/webhook-secrets.js';
import { createOrganizer } from './support/events.js';
import { createUserWithToken } from './support/fixtures.js';
import { eventually } from './support/eventually.js';
import { startTestApp, type TestApp } from './support/test-app.js';
import { WebhookReceiver } from './support/webhook-receiver.js';

// The application as an operator runs it by default (private targets not allowed): an endpoint whose
// address is private when the attempt is made gets no request, whatever its row says. The endpoint is
// written straight into the table, as if it had been registered when its name resolved to a public
// address (or by an older release), so that only the attempt's own check stands between the job and
// the receiver on the loopback address. Every other delivery test allows private targets to reach its
// receiver; this one shows that the attempts use the operator's policy, not a permissive one.

let t: TestApp;
let receiver: WebhookReceiver;
let db: DataSource;

beforeAll(async () => {
  receiver = await WebhookReceiver.start();
  t = await startTestApp({ WEBHOOKS_ALLOW_HTTP: 'true' });
  db = t.get(DataSource);
}, 60_000);
afterAll(async () => {
  await t?.close();
  await receiver?.close();
});

it('refuses to deliver to a loopback address when private targets are not allowed, and says why in the log', async () => {
  const { token } = await createUserWithToken(t);
  const organizer = await createOrganizer(t, token);
  const organizerId = Buffer.from(organizer.id, 'base64url').toString('utf8').split(':')[1]!;
  const endpointId = randomUUID();
  await db.query(
    `INSERT INTO webhook_endpoints (id, organizer_id, application_id, url, description, event_types, state, secret_sealed, created_at, updated_at)
     VALUES ($1, $2, NULL, $3, 'loopback', $4, 'active', $5, now(), now())`,
    [endpointId, organizerId, receiver.url('/private'), ['event.published'], sealWebhookSecret(t.config.secretKey!, newWebhookSecret())],
  );

  const deliveryId = await t.get(WebhookDispatch).sendTest(endpointId);
  const [attempt] = await eventually(async () => {
    const rows = (await db.query(`SELECT outcome, response_status, error FROM webhook_attempts WHERE delivery_id = $1`, [deliveryId])) as {
      outcome: string;
      response_status: number | null;
      error: string | null;
    }[];
    expect(rows).toHaveLength(1);
    return rows;
  });
  expect(attempt).toEqual({ outcome: 'failed', response_status: null, error: expect.stringMatching(/^refused: .*loopback/) });
  expect(receiver.received).toHaveLength(0);
});
