import { createHmac } from 'node:crypto';
import { webhookSigningKey } from './webhook-secrets.js';

/**
 * The Standard Webhooks headers: `webhook-id`, `webhook-timestamp` (Unix seconds), `webhook-signature`
 * (`v1,<base64 HMAC-SHA256 of "id.timestamp.body">` per secret, space-separated: two during a rotation).
 * Each secret is a `whsec_` secret; its key is the base64 after the prefix (webhookSigningKey).
 */
export function signedHeaders(secrets: string[], id: string, timestamp: Date, body: string): Record<string, string> {
  const seconds = String(Math.floor(timestamp.getTime() / 1000));
  const signed = `${id}.${seconds}.${body}`;
  const signatures = secrets.map(
    (secret) => `v1,${createHmac('sha256', webhookSigningKey(secret)).update(signed, 'utf8').digest('base64')}`,
  );
  return { 'webhook-id': id, 'webhook-timestamp': seconds, 'webhook-signature': signatures.join(' ') };
}
