import { formatUserCode, generateUserCode, normalizeUserCode, USER_CODE_ALPHABET } from './user-code.js';

describe('user codes', () => {
  it('are 8 letters of the consonant alphabet', () => {
    for (let i = 0; i < 200; i++) {
      const code = generateUserCode();
      expect(code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{8}$/);
    }
    expect(USER_CODE_ALPHABET).toHaveLength(20);
  });

  it('are shown in two groups of four', () => {
    expect(formatUserCode('BCDFGHJK')).toBe('BCDF-GHJK');
  });

  it.each(['BCDF-GHJK', 'bcdf-ghjk', 'bcdfghjk', ' BcDf ghjk ', 'BC-DF-GH-JK'])('reads %j as BCDFGHJK', (typed) => {
    expect(normalizeUserCode(typed)).toBe('BCDFGHJK');
  });

  it.each(['', 'BCDF-GHJ', 'BCDF-GHJKL', 'BCDF-GHJA', 'BCDF-GHJ0', 'BCDF_GHJK', 'x'.repeat(100)])('refuses %j', (typed) => {
    expect(normalizeUserCode(typed)).toBeNull();
  });
});
