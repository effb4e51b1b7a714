import { randomBytes } from 'node:crypto';
import { decryptWithSecret, encryptWithSecret } from '../config/key-encryption.js';

/**
 * A new endpoint secret in the Standard Webhooks form: `whsec_` and 32 random bytes in base64. Shown
 * to its owner once; stored sealed (AES-256-GCM under a key derived from SECRET_KEY), since signing
 * needs the secret itself.
 */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** The HMAC key of a `whsec_` secret: the base64 after the prefix, decoded. */
export function webhookSigningKey(secret: string): Buffer {
  return Buffer.from(secret.slice('whsec_'.length), 'base64');
}

export function sealWebhookSecret(secretKey: string, secret: string): string {
  return encryptWithSecret(secretKey, secret, 'webhook-secrets');
}

export function unsealWebhookSecret(secretKey: string, sealed: string): string {
  return decryptWithSecret(secretKey, sealed, 'webhook-secrets');
}
