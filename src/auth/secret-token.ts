import { hash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * Prefixes of every secret this service issues. Distinct prefixes tell the kinds apart without a
 * database lookup and let secret scanners recognise leaked tokens.
 */
export const SecretPrefix = {
  personalAccessToken: 'agora_pat_',
  oauthAccessToken: 'agora_oat_',
  oauthClientSecret: 'agora_ocs_',
  oauthRefreshToken: 'agora_ort_',
  oauthDeviceCode: 'agora_odc_',
  oauthRegistrationAccessToken: 'agora_rat_',
  oauthResourceServerSecret: 'agora_rss_',
} as const;
export type SecretPrefix = (typeof SecretPrefix)[keyof typeof SecretPrefix];

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_BYTES = 32;
const BODY_LENGTH = 43; // 62^43 > 2^256: every 32-byte value fits.
const CHECKSUM_LENGTH = 6; // 62^6 > 2^32: every CRC-32 fits.
const SHAPE = new RegExp(`^agora_[a-z]{3}_[0-9A-Za-z]{${BODY_LENGTH + CHECKSUM_LENGTH}}$`);

function base62(value: bigint, length: number): string {
  let out = '';
  let rest = value;
  while (rest > 0n) {
    out = ALPHABET[Number(rest % 62n)] + out;
    rest /= 62n;
  }
  return out.padStart(length, '0');
}

function checksum(prefixAndBody: string): string {
  return base62(BigInt(crc32(prefixAndBody)), CHECKSUM_LENGTH);
}

/** A new secret: prefix, 32 random bytes in base62, and a CRC-32 checksum of both. */
export function generateSecret(prefix: SecretPrefix): string {
  const body = base62(BigInt(`0x${randomBytes(RANDOM_BYTES).toString('hex')}`), BODY_LENGTH);
  return `${prefix}${body}${checksum(prefix + body)}`;
}

/** True when the value has the shape and checksum of a secret with this prefix (no lookup needed). */
export function isWellFormedSecret(value: string, prefix: SecretPrefix): boolean {
  if (!value.startsWith(prefix) || !SHAPE.test(value)) return false;
  const body = value.slice(prefix.length, prefix.length + BODY_LENGTH);
  return value.endsWith(checksum(prefix + body));
}

/** The only form in which secrets are stored: SHA-256, hex (one-shot: every API request hashes its token). */
export function hashSecret(value: string): string {
  return hash('sha256', value, 'hex');
}
