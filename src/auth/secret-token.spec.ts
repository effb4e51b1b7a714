import { generateSecret, hashSecret, isWellFormedSecret, SecretPrefix } from './secret-token.js';

describe('secret tokens', () => {
  it('generates prefixed tokens of fixed length that pass their own checksum', () => {
    for (let i = 0; i < 200; i++) {
      const token = generateSecret(SecretPrefix.personalAccessToken);
      expect(token).toMatch(/^agora_pat_[0-9A-Za-z]{49}$/);
      expect(isWellFormedSecret(token, SecretPrefix.personalAccessToken)).toBe(true);
    }
  });

  it('never repeats a token', () => {
    const seen = new Set(Array.from({ length: 1000 }, () => generateSecret(SecretPrefix.oauthAccessToken)));
    expect(seen.size).toBe(1000);
  });

  it('rejects a token whose body was altered by one character', () => {
    const token = generateSecret(SecretPrefix.personalAccessToken);
    const i = 20;
    const altered = token.slice(0, i) + (token[i] === 'a' ? 'b' : 'a') + token.slice(i + 1);
    expect(isWellFormedSecret(altered, SecretPrefix.personalAccessToken)).toBe(false);
  });

  it('rejects a token of another kind, a truncated token and foreign characters', () => {
    const token = generateSecret(SecretPrefix.oauthAccessToken);
    expect(isWellFormedSecret(token, SecretPrefix.personalAccessToken)).toBe(false);
    expect(isWellFormedSecret(token.slice(0, -1), SecretPrefix.oauthAccessToken)).toBe(false);
    expect(isWellFormedSecret(`${token.slice(0, -2)}é1`, SecretPrefix.oauthAccessToken)).toBe(false);
    expect(isWellFormedSecret('', SecretPrefix.oauthAccessToken)).toBe(false);
  });

  it('hashes with SHA-256 to 64 hex characters, deterministically', () => {
    expect(hashSecret('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});
