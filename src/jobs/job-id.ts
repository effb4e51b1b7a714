import { createHash } from 'node:crypto';

/**
 * A job id derived from what the job is about (a UUID of version 8, from SHA-256 of the parts): the
 * same parts give the same id, so enqueueing the job again (a retried fan-out) adds nothing.
 */
export function derivedJobId(...parts: string[]): string {
  const bytes = createHash('sha256').update(parts.join('\u0000')).digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x80;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
