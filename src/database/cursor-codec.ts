import { createHmac, timingSafeEqual } from 'node:crypto';
import { deriveKey } from '../config/key-encryption.js';

const VERSION = 1;
/** HMAC-SHA256 truncated to 128 bits. */
const TAG_BYTES = 16;
/** Our cursors are under 400 characters; anything longer is refused before it is decoded. */
const MAX_CURSOR_LENGTH = 512;

/**
 * Pagination cursors: `base64url(version ‖ tag ‖ JSON of the sort-key values)`, the tag an HMAC-SHA256
 * (key derived from SECRET_KEY for this purpose only) over the version, the list the cursor belongs to,
 * and the values. A cursor changed in any way, forged without the key, issued under another SECRET_KEY,
 * of another format version, or of another list or direction does not open. Opaque to clients, though
 * not secret: the values are a position in a list the caller was shown.
 */
export class CursorCodec {
  constructor(private readonly key: Buffer) {}

  static fromSecret(secretKey: string | undefined): CursorCodec {
    if (!secretKey) throw new Error('SECRET_KEY is not resolved: pagination cursors need it');
    return new CursorCodec(deriveKey(secretKey, 'pagination-cursors'));
  }

  /** A cursor for `values` on the list named `binding`. */
  seal(values: readonly string[], binding: string): string {
    const payload = Buffer.from(JSON.stringify(values), 'utf8');
    return Buffer.concat([Buffer.of(VERSION), this.tag(binding, payload), payload]).toString('base64url');
  }

  /** The values of a cursor this codec sealed for `binding`, or undefined for anything else. */
  open(cursor: string, binding: string): unknown {
    if (cursor.length > MAX_CURSOR_LENGTH) return undefined;
    const bytes = Buffer.from(cursor, 'base64url');
    // Node's decoder skips characters outside the alphabet and ignores trailing bits: only the
    // canonical spelling of the bytes is accepted, so no two strings are the same cursor.
    if (bytes.length <= 1 + TAG_BYTES || bytes.toString('base64url') !== cursor || bytes[0] !== VERSION) return undefined;
    const payload = bytes.subarray(1 + TAG_BYTES);
    if (!timingSafeEqual(bytes.subarray(1, 1 + TAG_BYTES), this.tag(binding, payload))) return undefined;
    try {
      return JSON.parse(payload.toString('utf8'));
    } catch {
      return undefined;
    }
  }

  private tag(binding: string, payload: Buffer): Buffer {
    return createHmac('sha256', this.key)
      .update(Buffer.of(VERSION))
      .update(binding, 'utf8')
      .update(Buffer.of(0))
      .update(payload)
      .digest()
      .subarray(0, TAG_BYTES);
  }
}
