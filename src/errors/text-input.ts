/**
 * What PostgreSQL and people can store as text: no NUL (PostgreSQL refuses U+0000 in `text`, which
 * used to surface as a 500), no lone UTF-16 surrogate (it cannot be encoded as UTF-8 and would be
 * stored as a replacement character, silently changing the data), and no other C0 control character
 * or DEL: no field holds them on purpose, and echoed into a terminal or a log they can rewrite what
 * an operator sees. Tab, line feed and carriage return are text.
 */
const NUL = '\u0000';
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0001-\u0008\u000B\u000C\u000E-\u001F\u007F]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why a string cannot be stored, or undefined when it can. */
export function unstorableText(value: string): string | undefined {
  if (value.includes(NUL)) return 'must not contain the NUL character (U+0000)';
  if (LONE_SURROGATE.test(value)) return 'must be valid Unicode text (it contains a lone surrogate)';
  if (CONTROL.test(value)) return 'must not contain control characters (other than tab and line breaks)';
  return undefined;
}

/** A text input that cannot be stored; `field` names where it is (`name`, `variables.input.title`, `query.client_id`). */
export class UnstorableTextError extends Error {
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${field} ${reason}`);
    this.name = 'UnstorableTextError';
  }
}

/** Throws UnstorableTextError for the first string (or object key) in `value` that cannot be stored. */
export function assertStorableText(value: unknown, field: string, depth = 0): void {
  if (typeof value === 'string') {
    const reason = unstorableText(value);
    if (reason) throw new UnstorableTextError(field, reason);
    return;
  }
  if (value === null || typeof value !== 'object' || depth > 64) return;
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    const reason = unstorableText(key);
    if (reason) throw new UnstorableTextError(`${field} key`, reason);
    assertStorableText(item, field ? `${field}.${key}` : key, depth + 1);
  }
}
