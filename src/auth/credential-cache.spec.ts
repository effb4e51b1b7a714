import { CredentialCache } from './credential-cache.js';
import { Principal } from './principal.js';

const principal = (userId: string, credentialId: string): Principal => ({
  user: { id: userId, username: 'u', name: 'U', email: 'u@example.com' },
  scopes: new Set(['api']),
  credential: { kind: 'personal_access_token', id: credentialId },
});

describe('CredentialCache', () => {
  it('returns an entry until its time to live passes', () => {
    const cache = new CredentialCache(1000);
    cache.set('h', principal('u1', 't1'), 0);
    expect(cache.get('h', 999)?.credential.id).toBe('t1');
    expect(cache.get('h', 1000)).toBeUndefined();
  });

  it('never keeps an entry past the credential expiry', () => {
    const cache = new CredentialCache(60_000);
    cache.set('h', principal('u1', 't1'), 0, new Date(500));
    expect(cache.get('h', 499)).toBeDefined();
    expect(cache.get('h', 500)).toBeUndefined();
  });

  it('forgets by credential and by user', () => {
    const cache = new CredentialCache(60_000);
    cache.set('a', principal('u1', 't1'), 0);
    cache.set('b', principal('u1', 't2'), 0);
    cache.set('c', principal('u2', 't3'), 0);
    cache.forgetCredential('t1');
    expect(cache.get('a', 1)).toBeUndefined();
    expect(cache.get('b', 1)).toBeDefined();
    cache.forgetUser('u1');
    expect(cache.get('b', 1)).toBeUndefined();
    expect(cache.get('c', 1)).toBeDefined();
  });

  it('stores nothing when disabled', () => {
    const cache = new CredentialCache(0);
    cache.set('h', principal('u1', 't1'), 0);
    expect(cache.get('h', 0)).toBeUndefined();
  });
});

describe('CredentialCache while suspended', () => {
  it('drops what it had and stores nothing until resumed', () => {
    const cache = new CredentialCache(60_000);
    cache.set('a', principal('u1', 't1'), 0);
    cache.suspend();
    expect(cache.get('a', 1)).toBeUndefined();
    cache.set('b', principal('u1', 't2'), 0);
    cache.resume();
    expect(cache.get('a', 1)).toBeUndefined();
    expect(cache.get('b', 1)).toBeUndefined();
  });
});
