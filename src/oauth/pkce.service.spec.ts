import { PkceService } from './pkce.service.js';

const pkce = new PkceService();

describe('PkceService', () => {
  // RFC 7636 Appendix B.
  const verifier = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
  const challenge = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

  it('computes the RFC 7636 example challenge', () => {
    expect(pkce.challengeOf(verifier)).toBe(challenge);
    expect(pkce.verify(verifier, challenge)).toBe(true);
  });

  it('rejects a wrong verifier', () => {
    expect(pkce.verify(`${verifier.slice(0, -1)}Y`, challenge)).toBe(false);
  });

  it.each([
    ['42 characters', 'a'.repeat(42)],
    ['129 characters', 'a'.repeat(129)],
    ['a character outside the unreserved set', `${'a'.repeat(42)}+`],
    ['a space', `${'a'.repeat(42)} `],
    ['not a string', 42],
  ])('rejects a verifier with %s', (_why, value) => {
    expect(pkce.isValidVerifier(value)).toBe(false);
    expect(pkce.verify(value, challenge)).toBe(false);
  });

  it('accepts verifiers of 43 and 128 characters', () => {
    expect(pkce.isValidVerifier('a'.repeat(43))).toBe(true);
    expect(pkce.isValidVerifier('~._-'.repeat(32))).toBe(true);
  });

  it('accepts only 43-character base64url challenges', () => {
    expect(pkce.isValidChallenge(challenge)).toBe(true);
    expect(pkce.isValidChallenge(`${challenge}=`)).toBe(false);
    expect(pkce.isValidChallenge(challenge.slice(1))).toBe(false);
    expect(pkce.isValidChallenge(challenge.replace('-', '+'))).toBe(false);
  });
});
