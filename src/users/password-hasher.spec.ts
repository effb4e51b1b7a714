import { PasswordHasher } from './password-hasher.js';

describe('PasswordHasher', () => {
  it('hashes with argon2id at RFC 9106’s second recommendation by default', async () => {
    const hash = await new PasswordHasher({ passwordHashCost: 'standard' }).hash('correct horse');
    expect(hash).toMatch(/^\$argon2id\$v=19\$m=65536,p=4,t=3\$/);
  });

  it('hashes at the least cost for test suites, and either verifies the other’s hashes (the parameters are in the hash)', async () => {
    const cheap = new PasswordHasher({ passwordHashCost: 'test' });
    const standard = new PasswordHasher({ passwordHashCost: 'standard' });
    const hash = await cheap.hash('correct horse');
    expect(hash).toMatch(/^\$argon2id\$v=19\$m=1024,p=1,t=1\$/);
    expect(await standard.verify(hash, 'correct horse')).toBe(true);
    expect(await cheap.verify(await standard.hash('battery staple'), 'battery staple')).toBe(true);
    expect(await cheap.verify(hash, 'wrong')).toBe(false);
    expect(await cheap.verify(undefined, 'correct horse')).toBe(false);
  });
});
