import { randomInt } from 'node:crypto';

/**
 * User codes of the device flow (RFC 8628 §6.1): 8 letters from 20 consonants (no vowels, so no words;
 * none that look like digits), about 34.6 bits, shown as `XXXX-XXXX` and read back whatever the case
 * and the dashes or spaces the user typed.
 */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
const LENGTH = 8;

export function generateUserCode(): string {
  let code = '';
  for (let i = 0; i < LENGTH; i++) code += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
  return code;
}

/** `BCDFGHJK` → `BCDF-GHJK`. */
export function formatUserCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/** What the user typed as the 8 letters, or null when it cannot be a user code. */
export function normalizeUserCode(input: string): string | null {
  if (input.length > 64) return null;
  const code = input.replace(/[\s-]/g, '').toUpperCase();
  if (code.length !== LENGTH) return null;
  return [...code].every((c) => USER_CODE_ALPHABET.includes(c)) ? code : null;
}
