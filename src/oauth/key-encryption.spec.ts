import { decryptWithSecret, encryptWithSecret } from './key-encryption.js';

describe('signing key encryption', () => {
  const secret = 'a-long-random-secret-key-for-tests-0123456789';

  it('round-trips and never stores the plaintext', () => {
    const sealed = encryptWithSecret(secret, '-----BEGIN PRIVATE KEY-----abc');
    expect(sealed).not.toContain('PRIVATE');
    expect(decryptWithSecret(secret, sealed)).toBe('-----BEGIN PRIVATE KEY-----abc');
  });

  it('fails with another secret or a tampered ciphertext', () => {
    const sealed = encryptWithSecret(secret, 'payload');
    expect(() => decryptWithSecret(`${secret}x`, sealed)).toThrow();
    const parts = sealed.split('.');
    parts[2] = Buffer.from('tampered').toString('base64url');
    expect(() => decryptWithSecret(secret, parts.join('.'))).toThrow();
  });
});
