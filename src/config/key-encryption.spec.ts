import { decryptWithSecret, encryptWithSecret } from './key-encryption.js';

describe('signing key encryption', () => {
  const secret = 'a-long-random-secret-key-for-tests-0123456789';

  it('round-trips and never stores the plaintext', () => {
    const sealed = encryptWithSecret(secret, 'pkcs8 key material 0123');
    expect(sealed).not.toContain('material');
    expect(decryptWithSecret(secret, sealed)).toBe('pkcs8 key material 0123');
  });

  it('fails with another secret or a tampered ciphertext', () => {
    const sealed = encryptWithSecret(secret, 'payload');
    expect(() => decryptWithSecret(`${secret}x`, sealed)).toThrow();
    const parts = sealed.split('.');
    parts[2] = Buffer.from('tampered').toString('base64url');
    expect(() => decryptWithSecret(secret, parts.join('.'))).toThrow();
  });
});
