import { validateNewUser } from './user-validation.js';
import { UserError } from './users.errors.js';

const valid = { username: 'ada', email: 'ada@example.com', name: 'Ada Lovelace', password: 'analytical-engine-1843' };

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof UserError ? `${err.code}:${err.field}` : 'other';
  }
  return undefined;
}

describe('validateNewUser', () => {
  it('trims and accepts a valid sign-up', () => {
    expect(validateNewUser({ ...valid, username: ' ada ', email: ' ada@example.com' })).toEqual(valid);
  });

  it.each([
    [{ username: 'a' }, 'INVALID_USERNAME:username'],
    [{ username: '-ada' }, 'INVALID_USERNAME:username'],
    [{ username: 'ada lovelace' }, 'INVALID_USERNAME:username'],
    [{ username: 'x'.repeat(40) }, 'INVALID_USERNAME:username'],
    [{ email: 'ada@' }, 'INVALID_EMAIL:email'],
    [{ email: 'no at sign' }, 'INVALID_EMAIL:email'],
    [{ name: '   ' }, 'INVALID_NAME:name'],
    [{ password: 'short' }, 'WEAK_PASSWORD:password'],
    [{ password: 'aaaaaaaaaaaa' }, 'WEAK_PASSWORD:password'],
    [{ password: 'Password123' }, 'WEAK_PASSWORD:password'],
    [{ password: 'my-name-is-ada!' }, 'WEAK_PASSWORD:password'],
  ])('rejects %j with %s', (change, expected) => {
    expect(codeOf(() => validateNewUser({ ...valid, ...change }))).toBe(expected);
  });
});
