import { UnstorableTextError, unstorableText } from './text-input.js';

/**
 * The one boundary for text Agora decodes out of a request header (HTTP Basic credentials after base64
 * and form-url decoding, Private-Token and Bearer tokens, cookie values after percent-decoding): the
 * same check as body text (`unstorableText`), valid UTF-8, and a length bound. Node's HTTP parser has refused NUL and the other control bytes in the raw header, but
 * base64 and percent-encoding bring them back, and a header's bytes over 0x7F reach us one character
 * per byte (Latin-1): what a decoder makes of them is checked here before any feature reads it.
 */

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** A header value's bytes as Node hands them over: one character per byte. */
export function headerBytes(value: string): Buffer {
  return Buffer.from(value, 'latin1');
}

/** Decodes bytes as UTF-8; a byte sequence that is not UTF-8 throws UnstorableTextError naming `field`. */
export function utf8Text(bytes: Uint8Array, field: string): string {
  try {
    return UTF8.decode(bytes);
  } catch {
    throw new UnstorableTextError(field, 'must be UTF-8 text');
  }
}

/** Decoded header text that features may read: storable, and at most `maxLength` characters. */
export function headerText(text: string, field: string, maxLength: number): string {
  if (text.length > maxLength) throw new UnstorableTextError(field, `must be at most ${maxLength} characters`);
  const reason = unstorableText(text);
  if (reason) throw new UnstorableTextError(field, reason);
  return text;
}

/** A header value as it came (no encoding of its own, such as a token): its bytes as UTF-8, checked. */
export function decodedHeader(value: string, field: string, maxLength: number): string {
  if (value.length > maxLength) throw new UnstorableTextError(field, `must be at most ${maxLength} characters`);
  return headerText(utf8Text(headerBytes(value), field), field, maxLength);
}

/** Form-url decoding (`+` is a space, then percent-decoding, RFC 6749 §2.3.1), checked as header text. */
export function formDecodedHeaderText(text: string, field: string, maxLength: number): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    throw new UnstorableTextError(field, 'must be valid percent-encoding of UTF-8 text');
  }
  return headerText(decoded, field, maxLength);
}

/** The longest cookie value Agora reads (its own are under 200 characters; browsers cap a cookie at 4 KB). */
export const MAX_COOKIE_VALUE_LENGTH = 4096;

/**
 * A cookie value as features read it (the `decode` of @fastify/cookie): percent-decoded when that gives
 * header text, and the empty string (what every reader treats as no cookie) when it does not. A cookie is
 * ambient state the browser sends on its own: refusing the request would lock a person out of every page
 * until they cleared it, so a cookie that fails the boundary is dropped instead, as a malformed one is.
 */
export function cookieText(raw: string): string {
  try {
    return decodeCookie(raw);
  } catch (err) {
    if (err instanceof UnstorableTextError) return '';
    throw err;
  }
}

function decodeCookie(raw: string): string {
  if (raw.length > MAX_COOKIE_VALUE_LENGTH)
    throw new UnstorableTextError('cookie', `must be at most ${MAX_COOKIE_VALUE_LENGTH} characters`);
  // Raw bytes over 0x7F first (UTF-8 or refused), then percent-decoding (cookie values are not
  // form-encoded: a `+` stays a plus), which refuses escapes that are not UTF-8 (a lone surrogate too).
  const text = /[^ -~]/.test(raw) ? utf8Text(headerBytes(raw), 'cookie') : raw;
  let decoded = text;
  if (text.includes('%')) {
    try {
      decoded = decodeURIComponent(text);
    } catch {
      throw new UnstorableTextError('cookie', 'must be valid percent-encoding of UTF-8 text');
    }
  }
  return headerText(decoded, 'cookie', MAX_COOKIE_VALUE_LENGTH);
}
