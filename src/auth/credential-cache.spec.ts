import { CredentialCache } from './credential-cache.js';
import { Principal } from './principal.js';

const principal = (userId: string, credentialId: string): Principal => ({
  user: { id: userId, username: 'u', name: 'U', email: 'u@example.com', emailVerified: false },
  scopes: new Set(['api']),
  credential: { kind: 'personal_access_token', id: credentialId },
});

describe('CredentialCache', () => {
  it('returns an entry until its time to live passes', () => {
    const cache = new CredentialCache(1000);
    cache.set('h', principal('u1', 't1'), 0, cache.generation);
    expect(cache.get('h', 999)?.credential.id).toBe('t1');
    expect(cache.get('h', 1000)).toBeUndefined();
  });

  it('never keeps an entry past the credential expiry', () => {
    const cache = new CredentialCache(60_000);
    cache.set('h', principal('u1', 't1'), 0, cache.generation, new Date(500));
    expect(cache.get('h', 499)).toBeDefined();
    expect(cache.get('h', 500)).toBeUndefined();
  });

  it('forgets by credential and by user', () => {
    const cache = new CredentialCache(60_000);
    cache.set('a', principal('u1', 't1'), 0, cache.generation);
    cache.set('b', principal('u1', 't2'), 0, cache.generation);
    cache.set('c', principal('u2', 't3'), 0, cache.generation);
    cache.forgetCredential('t1');
    expect(cache.get('a', 1)).toBeUndefined();
    expect(cache.get('b', 1)).toBeDefined();
    cache.forgetUser('u1');
    expect(cache.get('b', 1)).toBeUndefined();
    expect(cache.get('c', 1)).toBeDefined();
  });

  it('stores nothing when disabled', () => {
    const cache = new CredentialCache(0);
    cache.set('h', principal('u1', 't1'), 0, cache.generation);
    expect(cache.get('h', 0)).toBeUndefined();
  });
});

describe('CredentialCache while suspended', () => {
  it('drops what it had and stores nothing until resumed', () => {
    const cache = new CredentialCache(60_000);
    cache.set('a', principal('u1', 't1'), 0, cache.generation);
    cache.suspend();
    expect(cache.get('a', 1)).toBeUndefined();
    cache.set('b', principal('u1', 't2'), 0, cache.generation);
    cache.resume();
    expect(cache.get('a', 1)).toBeUndefined();
    expect(cache.get('b', 1)).toBeUndefined();
  });

  it('does not store a value read while suspended that arrives after resuming (it may have missed a notification)', () => {
    const cache = new CredentialCache(60_000);
    cache.suspend();
    const generation = cache.generation;
    cache.resume();
    cache.set('a', principal('u1', 't1'), 0, generation);
    expect(cache.get('a', 1)).toBeUndefined();
  });
});

describe('CredentialCache trust window', () => {
  it('serves nothing once the listener has not confirmed its notifications in time, and serves again when it does', () => {
    const cache = new CredentialCache(60_000);
    cache.set('a', principal('u1', 't1'), 0, cache.generation);
    cache.trustUntil(performance.now() - 1);
    expect(cache.get('a', 1)).toBeUndefined();
    cache.trustUntil(performance.now() + 60_000);
    expect(cache.get('a', 1)?.credential.id).toBe('t1');
  });
});

describe('CredentialCache and reads that race an eviction', () => {
  it('does not store a value read before an eviction', () => {
    const cache = new CredentialCache(60_000);
    const before = cache.generation;
    cache.forgetCredential('t1');
    cache.set('a', principal('u1', 't1'), 0, before);
    cache.setClient('client-a', { id: 'app1' }, 0, before);
    expect(cache.get('a', 1)).toBeUndefined();
    expect(cache.getClient('client-a', 1)).toBeUndefined();
  });
});

describe('CredentialCache of OAuth clients', () => {
  it('returns a client by client id until its time to live passes, and forgets it by its id', () => {
    const cache = new CredentialCache(1000);
    cache.setClient('client-a', { id: 'app1' }, 0, cache.generation);
    cache.setClient('client-b', { id: 'app2' }, 0, cache.generation);
    expect(cache.getClient('client-a', 999)?.id).toBe('app1');
    cache.forgetCredential('app1');
    expect(cache.getClient('client-a', 1)).toBeUndefined();
    expect(cache.getClient('client-b', 1)?.id).toBe('app2');
    expect(cache.getClient('client-b', 1000)).toBeUndefined();
  });

  it('drops clients when suspended', () => {
    const cache = new CredentialCache(60_000);
    cache.setClient('client-a', { id: 'app1' }, 0, cache.generation);
    cache.suspend();
    cache.resume();
    expect(cache.getClient('client-a', 1)).toBeUndefined();
  });
});
