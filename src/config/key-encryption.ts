import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 'v1';

/** What a derived key is for: each use gets a key of its own. */
export type KeyPurpose =
  | 'oauth-signing-keys'
  | 'page-flash'
  | 'pagination-cursors'
  | 'mail-unsubscribe'
  | 'totp-secrets'
  | 'recovery-codes'
  | 'account-links'
  | 'webhook-secrets'
  /** OpenID Connect `sid` (back-channel logout): a keyed hash of the session's id. */
  | 'oidc-session-ids'
  /** OpenID Connect pairwise subject identifiers (Core §8.1). */
  | 'oidc-pairwise-subjects';

/** A 256-bit key for one purpose, derived from SECRET_KEY with HKDF-SHA256. */
export function deriveKey(secretKey: string, purpose: KeyPurpose): Buffer {
  return Buffer.from(hkdfSync('sha256', secretKey, 'agora', purpose, 32));
}

/** AES-256-GCM under a key derived (HKDF-SHA256) from SECRET_KEY for one purpose: `v1.<iv>.<ciphertext>.<tag>`. */
export function encryptWithSecret(secretKey: string, plaintext: string, purpose: KeyPurpose = 'oauth-signing-keys'): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', deriveKey(secretKey, purpose), iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [VERSION, iv.toString('base64url'), ciphertext.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
}

export function decryptWithSecret(secretKey: string, sealed: string, purpose: KeyPurpose = 'oauth-signing-keys'): string {
  const [version, iv, ciphertext, tag] = sealed.split('.');
  if (version !== VERSION || !iv || !ciphertext || !tag) throw new Error('Unrecognised encrypted key format');
  const decipher = createDecipheriv('aes-256-gcm', deriveKey(secretKey, purpose), Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
}
