import fc from 'fast-check';
import { unstorableText } from '../../../src/errors/text-input.js';

/**
 * Hostile text: what people, scripts and attackers send instead of a name. Every surface is fuzzed
 * with these, so a new field is covered the day it is added.
 */

/** Characters that break storage, parsers, encodings or markup. */
const HOSTILE_CHARS = [
  '\u0000', // PostgreSQL refuses it in text
  '\uD800', // lone high surrogate: no UTF-8 encoding
  '\uDBFF',
  '\uDC00', // lone low surrogate
  '\uDFFF',
  '\u0001',
  '\u0007',
  '\b',
  '\t',
  '\n',
  '\r',
  '\u000B',
  '\u000C',
  '\u001B',
  '\u001F',
  '\u007F',
  '\u0085',
  '\u00A0',
  '\u00AD',
  '\u2028',
  '\u2029',
  '\u200B',
  '\u200D',
  '\u202E', // right-to-left override
  '\uFEFF',
  '\uFFFD',
  '\uFFFE',
  '\uFFFF',
  '\u{1F39F}\uFE0F', // emoji with a variation selector
  '\u{10FFFF}',
  'e\u0301', // combining accent
  'İ', // changes length when lower-cased
  'ß',
  'ﬃ',
  '%',
  '"',
  "'",
  '`',
  '\\',
  '<',
  '>',
  '&',
  '/',
  '?',
  '#',
  '=',
  ';',
  ',',
  '+',
  ' ',
  '$',
  '{',
  '}',
  '[',
  ']',
  ':',
  '@',
  '*',
  '_',
];

/** Payloads aimed at SQL, markup, templates, paths, number and date parsers. */
const PAYLOADS = [
  '',
  ' ',
  "' OR '1'='1",
  "'; DROP TABLE users; --",
  '" OR ""="',
  '1; SELECT pg_sleep(0)',
  "') UNION SELECT NULL,NULL--",
  '%',
  '_',
  '%_%',
  '\\',
  '\\x00',
  "E'\\000'",
  '$1',
  '::text',
  "' || chr(0) || '",
  '<script>alert(1)</script>',
  '"><img src=x onerror=alert(1)>',
  '</textarea><svg onload=alert(1)>',
  '<!--',
  ']]>',
  '&#0;',
  '&lt;&amp;',
  'javascript:alert(1)',
  'data:text/html,<script>alert(1)</script>',
  '{{7*7}}',
  '${7*7}',
  '#{7*7}',
  '../../../../etc/passwd',
  '..%2f..%2fetc%2fpasswd',
  '%00',
  '%ED%A0%80',
  '%C0%80',
  '%FF%FE',
  '%zz',
  '%',
  '%%',
  '%2',
  '%u0000',
  '%E0%A4%A',
  '\\u0000',
  '\\ud800',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'null',
  'undefined',
  'NaN',
  'true',
  '[]',
  '{}',
  '0',
  '-0',
  '-1',
  '1e309',
  '-1e309',
  '9007199254740993',
  '2147483648',
  '-2147483649',
  '99999999999999999999999999999',
  '0x1F',
  '1.5',
  ' 7',
  '٣',
  'Infinity',
  '2031-02-31T00:00:00Z',
  '2024-01-01T25:61:61+99:99',
  '0000-01-01T00:00:00Z',
  '9999-12-31T23:59:59.999999999+14:00',
  '-271821-04-20T00:00:00Z',
  '+275760-09-13T00:00:00Z',
  '1970-01-01',
  'Europe/Atlantis',
  'UTC',
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
  'FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF',
  '0b6f7c3e-2f64-4a0b-9d1e-3f4a5b6c7d8e\u0000',
  'agora_pat_',
  'agora_oat_' + 'A'.repeat(43),
  'agora_pat_' + 'z'.repeat(200),
  'Bearer',
  'Basic Og==',
  'http://localhost:4000/callback',
  'http://localhost:4000/callback#frag',
  'https://evil.example/cb',
  '//evil.example',
  'file:///etc/passwd',
  'mailto:a@b',
  'a@b',
  '@',
  'a@b@c',
  '"a"@example.com',
  'user@[127.0.0.1]',
  'ﬃ@example.com',
];

/** Any UTF-16 code unit, lone surrogates included (well-formed generators never produce them). */
const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((n) => String.fromCharCode(n));

const hostileChar = fc.constantFrom(...HOSTILE_CHARS);

/** Short text mixing ordinary letters with hostile characters. */
const mixed = fc.string({
  unit: fc.oneof({ weight: 3, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }) }, hostileChar, codeUnit),
  maxLength: 40,
});

/** Text of a given length, around the limits fields have (100, 200, 255, 5,000, 20,000 characters). */
function longText(lengths: number[]): fc.Arbitrary<string> {
  return fc
    .tuple(fc.constantFrom(...lengths), fc.constantFrom('a', 'é', '\u{1F600}', '\u0000', '\uD800', '<', '%', ' ', '9'))
    .map(([length, char]) => char.repeat(Math.ceil(length / char.length)));
}

const FIELD_LIMITS = [64, 65, 100, 101, 200, 201, 255, 256, 2000, 2001, 5001, 20001, 70_000];

/**
 * One hostile string: a payload, short mixed text, unicode, a payload with a hostile character in it,
 * or text around a field's length limit. Bodies over the 1 MB limit are built by the callers that send
 * them (`hugeText`), as they are slow to send on every run.
 */
export const hostileText: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...PAYLOADS) },
  { weight: 4, arbitrary: mixed },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: codeUnit, maxLength: 20 }) },
  { weight: 2, arbitrary: fc.tuple(fc.constantFrom(...PAYLOADS), hostileChar, fc.constantFrom(...PAYLOADS)).map((p) => p.join('')) },
  { weight: 1, arbitrary: longText(FIELD_LIMITS) },
);

/**
 * Hostile text PostgreSQL can store (no NUL, no lone surrogate): what gets past the text boundary
 * into the services, where lengths, formats and constraints must still be checked.
 */
export const storableText: fc.Arbitrary<string> = hostileText.filter((text) => unstorableText(text) === undefined);

/** A string within or just over the 1 MB body limit. */
export const hugeText = longText([600_000, 1_048_576, 1_200_000]);

/** A real value most of the time, so a request gets past the first check, else a hostile one. */
export function mostlyReal<T>(real: fc.Arbitrary<T>, weight = 2): fc.Arbitrary<T | string> {
  return fc.oneof({ weight, arbitrary: real }, { weight: 1, arbitrary: hostileText });
}

/** A base64url string, a common shape for IDs and cursors, made of hostile bytes. */
export const base64urlOfJunk: fc.Arbitrary<string> = fc
  .oneof(
    hostileText,
    fc
      .constantFrom('Event:', 'Organizer:', 'TicketType:', 'Registration:', 'Attendee:', 'User:')
      .chain((prefix) => fc.oneof(fc.uuid(), hostileText).map((rest) => prefix + rest)),
  )
  .map((text) => Buffer.from(text, 'utf8').toString('base64url'));
