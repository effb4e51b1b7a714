import fc from 'fast-check';
import { hostileText } from './text.js';

/**
 * Values as they travel: JSON with numbers JSON.stringify cannot write (1e400, 30 digits), and
 * URL-encoded text in every way a client can get it wrong. A lone surrogate has no UTF-8 form: JSON
 * carries it as a `\ud800` escape, a URL as the bytes of its WTF-8 form (%ED%A0%80) or, from
 * URLSearchParams, silently replaced by U+FFFD.
 */

/** A JSON number token written as is. */
export class RawJson {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

export const hostileNumberToken: fc.Arbitrary<RawJson> = fc
  .constantFrom(
    '1e400',
    '-1e400',
    '1e-400',
    '123456789012345678901234567890',
    '-123456789012345678901234567890',
    '9007199254740993',
    '2147483648',
    '-2147483649',
    '4294967296',
    '-0',
    '0.1',
    '1.0',
    '1E2',
    '0e0',
    '1.7976931348623157e308',
  )
  .map((text) => new RawJson(text));

export type Junk = null | boolean | number | string | RawJson | Junk[] | { [key: string]: Junk };

const junkNumber = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, -1, 1, 2 ** 31, -(2 ** 31) - 1, Number.MAX_SAFE_INTEGER, 2 ** 53 + 2, 1e21, 0.5),
);

const junkKey = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('name', 'slug', 'id', 'input', 'query', 'first', 'after', 'title', 'email', 'amount') },
  { weight: 1, arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype', '', '\u0000', '\uD800', 'a.b', '$where') },
  { weight: 1, arbitrary: hostileText },
);

/** Any JSON value, nested, with hostile strings, keys and numbers. */
export const junk: fc.Arbitrary<Junk> = fc.letrec<{ value: Junk }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    junkNumber,
    hostileNumberToken,
    hostileText,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(junkKey, tie('value'), { maxKeys: 4 }),
  ),
})).value;

/** Arrays or objects nested far deeper than any input type (parsers that recurse can overflow). */
export const deeplyNested: fc.Arbitrary<RawJson> = fc
  .tuple(fc.constantFrom(100, 1_000, 10_000, 100_000), fc.boolean())
  .map(([depth, arrays]) => new RawJson(arrays ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth)));

/** JSON text of a value, writing RawJson tokens as they are and lone surrogates as escapes. */
export function toJson(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (value === undefined) return 'null';
  if (value !== null && typeof (value as { toJSON?: unknown }).toJSON === 'function')
    return toJson((value as { toJSON(): unknown }).toJSON());
  if (Array.isArray(value)) return `[${value.map(toJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    // Own keys only, `__proto__` included (an object literal key, not the prototype); undefined members left out.
    const members = Object.keys(value).filter((key) => (value as Record<string, unknown>)[key] !== undefined);
    return `{${members.map((key) => `${JSON.stringify(key)}:${toJson((value as Record<string, unknown>)[key])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

const WTF8_SURROGATE = (unit: number) =>
  [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');

/** Percent-encodes every byte of the text's UTF-8 form, lone surrogates as their WTF-8 bytes. */
function percentEncodeStrict(text: string): string {
  let out = '';
  for (const char of text) {
    const unit = char.charCodeAt(0);
    if (char.length === 1 && unit >= 0xd800 && unit <= 0xdfff) out += WTF8_SURROGATE(unit);
    else out += [...Buffer.from(char, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
  }
  return out;
}

/** How a client puts text into a URL or a form body. */
export type UrlEncoding = 'standard' | 'strict' | 'raw';

/**
 * `standard`: as URLSearchParams does (a lone surrogate becomes U+FFFD); `strict`: every byte
 * percent-encoded (lone surrogates as WTF-8 bytes); `raw`: the text as is, `%zz` and all, with only
 * the characters that would end the parameter (`&`, `#`, `=`, space) encoded. Raw text can hold
 * bytes that fetch refuses to put in a URL; such requests go through raw-http.
 */
export function encodeComponent(text: string, encoding: UrlEncoding): string {
  if (encoding === 'standard') return new URLSearchParams({ x: text }).toString().slice(2);
  if (encoding === 'strict') return percentEncodeStrict(text);
  return text.replace(/[&#= ]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

export const urlEncoding: fc.Arbitrary<UrlEncoding> = fc.constantFrom('standard', 'strict', 'raw');

/** A query string or form body from name/value pairs, names repeated or not, encoded one way. */
export function encodePairs(pairs: [string, string][], encoding: UrlEncoding): string {
  return pairs.map(([name, value]) => `${encodeComponent(name, encoding)}=${encodeComponent(value, encoding)}`).join('&');
}

/**
 * The parameters of a request around those an endpoint expects: each expected one present most of the
 * time, with a value from `value` (real or hostile), then a few more: optional ones, an expected one
 * again (a repeat), or any name at all.
 */
export function paramsAround(
  expected: string[],
  value: (name: string) => fc.Arbitrary<string>,
  optional: string[] = [],
): fc.Arbitrary<[string, string][]> {
  const pair = (name: string) => value(name).map((v): [string, string] => [name, v]);
  const present = fc.tuple(
    ...expected.map((name) => fc.oneof({ weight: 1, arbitrary: fc.constant(null) }, { weight: 7, arbitrary: pair(name) })),
  );
  const names: fc.WeightedArbitrary<string>[] = [{ weight: 1, arbitrary: hostileText }];
  if (optional.length) names.push({ weight: 3, arbitrary: fc.constantFrom(...optional) });
  if (expected.length) names.push({ weight: 1, arbitrary: fc.constantFrom(...expected) });
  const name = fc.oneof(...names);
  const more = fc.array(name.chain(pair), { maxLength: 3 });
  return fc.tuple(present, more).map(([first, rest]) => [...first.filter((p): p is [string, string] => p !== null), ...rest]);
}
