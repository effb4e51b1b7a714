import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';

/** One attempt as the dispatcher records it. */
export interface LoggedAttempt {
  trigger: 'automatic' | 'redelivery' | 'test';
  outcome: 'succeeded' | 'failed';
  status: number | null;
  body?: string;
  error?: string;
  durationMs: number;
}

/**
 * A delivery of a new message to an endpoint, written straight into the tables as the dispatcher leaves
 * it in the log (for the pages that show the log), with its attempts one minute apart from `createdAt`.
 */
export async function insertDelivery(
  db: DataSource,
  endpointId: string,
  o: {
    createdAt: Date;
    eventType?: string;
    state?: 'scheduled' | 'queued' | 'succeeded' | 'failed' | 'skipped';
    attempts?: LoggedAttempt[];
    nextAttemptAt?: Date | null;
    /** The body sent; a small registration payload unless given. */
    body?: string;
  },
): Promise<{ id: string; webhookId: string }> {
  const messageId = randomUUID();
  const deliveryId = randomUUID();
  const eventType = o.eventType ?? 'registration.confirmed';
  const body =
    o.body ??
    JSON.stringify({
      type: eventType,
      timestamp: o.createdAt.toISOString(),
      data: { object: 'registration', id: 'UmVnaXN0cmF0aW9uOjE=', url: 'https://agora.example/api/registrations/1' },
    });
  const attempts = o.attempts ?? [];
  const last = attempts.length ? new Date(o.createdAt.getTime() + (attempts.length - 1) * 60_000) : null;
  await db.query(`INSERT INTO webhook_messages (id, event_type, body, created_at) VALUES ($1, $2, $3, $4)`, [
    messageId,
    eventType,
    body,
    o.createdAt,
  ]);
  await db.query(
    `INSERT INTO webhook_deliveries (id, message_id, endpoint_id, state, attempts, next_attempt_at, last_attempt_at, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [deliveryId, messageId, endpointId, o.state ?? 'succeeded', attempts.length, o.nextAttemptAt ?? null, last, o.createdAt],
  );
  for (const [i, a] of attempts.entries()) {
    await db.query(
      `INSERT INTO webhook_attempts (id, delivery_id, number, trigger, started_at, duration_ms, outcome, response_status, response_body, error)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [
        randomUUID(),
        deliveryId,
        i + 1,
        a.trigger,
        new Date(o.createdAt.getTime() + i * 60_000),
        a.durationMs,
        a.outcome,
        a.status,
        a.body ?? null,
        a.error ?? null,
      ],
    );
  }
  return { id: deliveryId, webhookId: `msg_${messageId}` };
}
