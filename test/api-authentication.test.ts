import { jest } from '@jest/globals';
import { DataSource } from 'typeorm';
import { generateSecret, SecretPrefix } from '../src/auth/secret-token.js';
import { PersonalTokensService } from '../src/personal-tokens/personal-tokens.service.js';
import { UsersService } from '../src/users/users.service.js';
import { createUserWithToken } from './support/fixtures.js';
import { graphql } from './support/http.js';
import { startTestApp, TestApp } from './support/test-app.js';

const VIEWER = '{ viewer { id name } }';
const PUBLIC_USER = '{ user(username: "nobody-here") { id } }';
const UNAUTHORIZED = { message: '401 Unauthorized' };

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

/** The recording of last use is fire-and-forget: wait for it. */
async function eventually<T>(read: () => Promise<T | null>): Promise<T> {
  for (let i = 0; i < 100; i++) {
    const value = await read();
    if (value) return value;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('value never appeared');
}

function expectExact401(res: { status: number; text: string; headers: Headers }, challenge: RegExp = /^Bearer/): void {
  expect(res.status).toBe(401);
  expect(res.text).toBe(JSON.stringify(UNAUTHORIZED));
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(res.headers.get('www-authenticate')).toMatch(challenge);
}

describe('anonymous callers', () => {
  it('get 401 with the exact body for an operation with a non-public field', async () => {
    expectExact401(
      await graphql(t.url, VIEWER),
      /^Bearer scope="api offline_access", resource_metadata="[^"]+\/\.well-known\/oauth-protected-resource\/graphql"$/,
    );
  });

  it('run operations made only of public fields', async () => {
    const res = await graphql(t.url, PUBLIC_USER);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { user: null } });
  });

  it('get 401 when a public field is mixed with a non-public one, also through a fragment', async () => {
    expectExact401(await graphql(t.url, '{ user(username: "x") { id } viewer { id } }'));
    expectExact401(await graphql(t.url, 'query { ...F } fragment F on Query { viewer { id } }'));
    expectExact401(await graphql(t.url, 'query { ... on Query { viewer { id } } }'));
  });

  it('get 401 for mutations', async () => {
    expectExact401(await graphql(t.url, 'mutation { updateViewerProfile(input: { name: "x" }) { user { id } } }'));
  });

  it('may introspect the schema and ask for __typename', async () => {
    const res = await graphql(t.url, '{ __typename __schema { queryType { name } } }');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ __typename: 'Query', __schema: { queryType: { name: 'Query' } } });
  });

  it('choose the operation by operationName: only the chosen one is checked', async () => {
    const doc = 'query Mine { viewer { id } } query Anyone { user(username: "x") { id } }';
    expect((await graphql(t.url, doc, { operationName: 'Anyone' })).status).toBe(200);
    expectExact401(await graphql(t.url, doc, { operationName: 'Mine' }));
  });

  it('cannot pass a token in the query string', async () => {
    const { token } = await createUserWithToken(t);
    for (const param of ['private_token', 'access_token']) {
      const res = await graphql(t.url, VIEWER, { path: `/graphql?${param}=${token}` });
      expectExact401(res, /^Bearer scope="api offline_access", resource_metadata="[^"]+\/graphql"$/);
    }
  });
});

describe('personal access tokens', () => {
  it('authenticate through Private-Token: viewer returns the user', async () => {
    const { user, token } = await createUserWithToken(t);
    const res = await graphql(t.url, VIEWER, { privateToken: token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { viewer: { id: user.id, name: user.name } } });
  });

  it('authenticate as a Bearer token too, with the scheme in any case', async () => {
    const { user, token } = await createUserWithToken(t);
    for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
      const res = await graphql(t.url, VIEWER, { headers: { authorization: `${scheme} ${token}` } });
      expect(res.status).toBe(200);
      expect(res.body.data?.viewer.id).toBe(user.id);
    }
  });

  it('stop working on the very next request after revocation', async () => {
    const { token, tokenId } = await createUserWithToken(t);
    expect((await graphql(t.url, VIEWER, { privateToken: token })).status).toBe(200);
    await t.get(PersonalTokensService).revoke(tokenId);
    expectExact401(await graphql(t.url, VIEWER, { privateToken: token }), /invalid_token/);
    expectExact401(await graphql(t.url, PUBLIC_USER, { privateToken: token }), /invalid_token/);
  });

  it('stop working when their expiry date passes', async () => {
    const { token } = await createUserWithToken(t, ['api'], { expiresAt: new Date(t.clock.now().getTime() + 86_400_000) });
    expect((await graphql(t.url, VIEWER, { privateToken: token })).status).toBe(200);
    t.clock.advance(86_400_000 + 1000);
    expectExact401(await graphql(t.url, VIEWER, { privateToken: token }));
  });

  it('of a blocked user stop working at once, and work again when unblocked', async () => {
    const { user, token } = await createUserWithToken(t);
    await t.get(UsersService).setState(user.username, 'blocked');
    expectExact401(await graphql(t.url, VIEWER, { privateToken: token }));
    await t.get(UsersService).setState(user.username, 'active');
    expect((await graphql(t.url, VIEWER, { privateToken: token })).status).toBe(200);
  });

  it('record when they were last used, without a write on every request', async () => {
    const { token, tokenId } = await createUserWithToken(t);
    const lastUsed = async (): Promise<Date | null> =>
      (await t.get(DataSource).query('SELECT last_used_at FROM personal_access_tokens WHERE id = $1', [tokenId]))[0].last_used_at;
    expect(await lastUsed()).toBeNull();
    await graphql(t.url, VIEWER, { privateToken: token });
    const first = await eventually(lastUsed);
    // Past the credential cache (so the token is verified against the database again) and within the interval.
    const { cacheTtlMs, personalTokenLastUsedIntervalMs } = t.config.auth;
    expect(cacheTtlMs + 1000).toBeLessThan(personalTokenLastUsedIntervalMs);
    t.clock.advance(cacheTtlMs + 1000);
    // The write would be started (not awaited) while the request is authenticated, before it is answered:
    // none was started, so none can land later. The token's row was read again: the spy sees the database.
    const query = jest.spyOn(t.get(DataSource), 'query');
    let statements: string[];
    try {
      await graphql(t.url, VIEWER, { privateToken: token });
      statements = query.mock.calls.map(([sql]) => sql);
    } finally {
      query.mockRestore();
    }
    expect(statements.filter((sql) => /\bpersonal_access_tokens\b/i.test(sql)).length).toBeGreaterThan(0);
    expect(statements.filter((sql) => /\bUPDATE\s+personal_access_tokens\b/i.test(sql))).toEqual([]);
    expect(await lastUsed()).toEqual(first);
    t.clock.advance(personalTokenLastUsedIntervalMs);
    await graphql(t.url, VIEWER, { privateToken: token });
    const later = await eventually(async () => ((await lastUsed())!.getTime() > first.getTime() ? lastUsed() : null));
    expect(later.getTime()).toBeGreaterThan(first.getTime());
  });

  it('are stored only as SHA-256 hashes', async () => {
    const { token, tokenId } = await createUserWithToken(t);
    const [row] = await t.get(DataSource).query('SELECT * FROM personal_access_tokens WHERE id = $1', [tokenId]);
    expect(JSON.stringify(row)).not.toContain(token);
    expect(JSON.stringify(row)).not.toContain(token.slice(10, 40));
    expect(row.token_hash).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('invalid credentials', () => {
  it.each([
    ['an unknown but well-formed token', () => ({ privateToken: generateSecret(SecretPrefix.personalAccessToken) })],
    ['a token with a wrong checksum', () => ({ privateToken: `${generateSecret(SecretPrefix.personalAccessToken).slice(0, -1)}x` })],
    ['garbage', () => ({ privateToken: 'not-a-token' })],
    ['an empty Private-Token', () => ({ privateToken: '' })],
    ['an OAuth-prefixed token in Private-Token', () => ({ privateToken: generateSecret(SecretPrefix.oauthAccessToken) })],
    ['an unknown Bearer token', () => ({ bearer: generateSecret(SecretPrefix.oauthAccessToken) })],
    ['Bearer without a token', () => ({ headers: { authorization: 'Bearer' } })],
    ['Bearer with two words', () => ({ headers: { authorization: 'Bearer a b' } })],
    ['an empty Authorization', () => ({ headers: { authorization: '' } })],
    ['Basic credentials', () => ({ headers: { authorization: 'Basic dXNlcjpwYXNz' } })],
  ])('get the exact 401 for %s, even on a public operation', async (_name, credentials) => {
    expectExact401(await graphql(t.url, VIEWER, credentials()));
    expectExact401(await graphql(t.url, PUBLIC_USER, credentials()));
  });

  it('get the exact 401 for a valid, recently used token in a malformed header (the remembered token is no shortcut)', async () => {
    const { token } = await createUserWithToken(t);
    expect((await graphql(t.url, VIEWER, { privateToken: token })).status).toBe(200); // now remembered
    expect((await graphql(t.url, VIEWER, { bearer: token })).status).toBe(200);
    for (const authorization of [`Bearer  ${token}`, `Bearer ${token} x`, `Basic ${token}`, `Token ${token}`, token]) {
      expectExact401(await graphql(t.url, VIEWER, { headers: { authorization } }));
    }
    for (const privateToken of [`Bearer ${token}`, `${token}x`]) expectExact401(await graphql(t.url, VIEWER, { privateToken }));
  });

  it('get 401 when both headers are sent, even if both are valid', async () => {
    const { token } = await createUserWithToken(t);
    expectExact401(await graphql(t.url, VIEWER, { privateToken: token, bearer: token }));
  });
});

describe('scopes', () => {
  const MUTATION = 'mutation { updateViewerProfile(input: { name: "Renamed" }) { user { name } userErrors { code } } }';

  it('read_api runs queries but gets 403 insufficient_scope for mutations', async () => {
    const { token } = await createUserWithToken(t, ['read_api']);
    expect((await graphql(t.url, VIEWER, { privateToken: token })).status).toBe(200);
    const res = await graphql(t.url, MUTATION, { privateToken: token });
    expect(res.status).toBe(403);
    expect(res.text).toBe(JSON.stringify({ message: '403 Forbidden', error: 'insufficient_scope' }));
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer error="insufficient_scope", scope="api", resource_metadata="${t.url}/.well-known/oauth-protected-resource/graphql"`,
    );
  });

  it('api runs mutations', async () => {
    const { token } = await createUserWithToken(t, ['api']);
    const res = await graphql(t.url, MUTATION, { privateToken: token });
    expect(res.status).toBe(200);
    expect(res.body.data?.updateViewerProfile).toEqual({ user: { name: 'Renamed' }, userErrors: [] });
    expect((await graphql(t.url, VIEWER, { privateToken: token })).body.data?.viewer.name).toBe('Renamed');
  });
});
