import { CursorCodec } from '../src/database/cursor-codec.js';
import { encodeCursor } from '../src/database/keyset.js';
import { byStart } from '../src/events/events.service.js';
import { Browser, formFields, signIn } from './support/browser.js';
import { createUser, createUserWithToken, TEST_PASSWORD } from './support/fixtures.js';
import { graphql, rest } from './support/http.js';
import { startTestApp, TestApp } from './support/test-app.js';

// Text PostgreSQL cannot store (U+0000, lone surrogates) is refused at the edge with each transport's
// own client error. Each of these answered 500 before the boundary.

let t: TestApp;
let token: string;
let browser: Browser;
beforeAll(async () => {
  t = await startTestApp();
  ({ token } = await createUserWithToken(t, ['api']));
  const user = await createUser(t);
  browser = new Browser(t.url);
  await browser.follow(await signIn(browser, user.username, TEST_PASSWORD));
});
afterAll(() => t.close());

const NUL = 'a\u0000b';

describe('OAuth endpoints', () => {
  it('token: invalid_request, no-store, in the RFC 6749 shape', async () => {
    const res = await fetch(`${t.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=authorization_code&code=x&client_id=a%00b&client_secret=s&redirect_uri=http%3A%2F%2Flocalhost%2Fcb&code_verifier=v',
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await res.json()).toEqual({
      error: 'invalid_request',
      error_description: 'client_id must not contain the NUL character (U+0000)',
    });
  });

  it('authorize: a 400 page', async () => {
    const res = await fetch(`${t.url}/oauth/authorize?client_id=a%00b&response_type=code`);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
  });
});

describe('pages', () => {
  it.each([
    ['/sign-in', { login: NUL, password: 'whatever-password' }],
    ['/sign-up', { name: NUL, username: 'nul-user', email: 'nul@example.com', password: 'long-enough-pass' }],
  ])('%s answers 400, not 500', async (path, form) => {
    const visitor = new Browser(t.url);
    const fields = formFields(await (await visitor.get(path)).text());
    const res = await visitor.post(path, { ...fields, ...form });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('Bad request');
  });

  it.each([
    ['/account/profile', { name: NUL }],
    ['/account/tokens', { name: NUL, scopes: 'api' }],
    ['/applications', { name: NUL, redirect_uris: 'https://a.example/cb', scopes: 'api' }],
  ])('signed in, %s answers 400 and stores nothing', async (path, form) => {
    const fields = formFields(await (await browser.get('/account')).text());
    const res = await browser.post(path, { _csrf: fields._csrf!, ...form });
    expect(res.status).toBe(400);
  });
});

describe('GraphQL', () => {
  it.each([
    ['{ event(slug: "a\\u0000b") { id } }', undefined],
    ['{ organizer(slug: "a\\u0000b") { id } }', undefined],
    ['{ user(username: "a\\u0000b") { id } }', undefined],
    ['mutation { createOrganizer(input: { slug: "nul", name: "a\\u0000b" }) { userErrors { field } } }', token],
  ])('refuses a string literal in %s as BAD_USER_INPUT at validation', async (query, privateToken) => {
    // A validation failure: 200 under application/json, as every validation failure (docs/graphql-over-http.md).
    const res = await graphql(t.url, query, { privateToken });
    expect(res.status).toBe(200);
    expect(res.body.data).toBeUndefined();
    expect(res.body.errors?.[0]?.extensions).toEqual({ code: 'BAD_USER_INPUT', field: 'query' });
  });

  it("does not log a refused string literal as a server error: it is the client's input", async () => {
    const before = t.logs.length;
    const res = await graphql(
      t.url,
      'mutation { createOrganizer(input: { slug: "nul-log", name: "a\\u0000b" }) { userErrors { field } } }',
      {
        privateToken: token,
      },
    );
    expect(res.body.errors?.[0]?.extensions).toEqual({ code: 'BAD_USER_INPUT', field: 'query' });
    expect(t.logs.slice(before).filter((line) => (line.level as number) >= 50)).toEqual([]);
  });

  it.each([
    ['mutation($name: String!) { updateViewerProfile(input: { name: $name }) { userErrors { field } } }', { name: NUL }, 'variables.name'],
    ['query($slug: String!) { event(slug: $slug) { id } }', { slug: 'x\ud800y' }, 'variables.slug'],
  ])('refuses a variable that cannot be stored, naming it', async (query, variables, field) => {
    const res = await graphql(t.url, query, { privateToken: token, variables });
    expect(res.status).toBe(400);
    expect(res.body.errors?.[0]?.extensions).toEqual({ code: 'BAD_USER_INPUT', field });
  });
});

describe('legacy REST API', () => {
  it('POST /api/organizers: 400 with the field', async () => {
    const res = await rest(t.url, 'POST', '/api/organizers', { privateToken: token, body: { slug: 'nul-org', name: NUL } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: '400 Bad Request', errors: { name: ['must not contain the NUL character (U+0000)'] } });
  });

  it('POST /api/organizers with a terminal escape sequence in the name: 400 with the field', async () => {
    const res = await rest(t.url, 'POST', '/api/organizers', { privateToken: token, body: { slug: 'esc-org', name: 'Evil \u001b[2J' } });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual({ name: ['must not contain control characters (other than tab and line breaks)'] });
  });

  it('GET /api/organizers/a%00b: 400 with the field', async () => {
    const res = await rest(t.url, 'GET', '/api/organizers/a%00b');
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual({ slug: ['must not contain the NUL character (U+0000)'] });
  });
});

describe('the boundary runs after the guards', () => {
  it('an anonymous call to a protected REST route is still a 401', async () => {
    const res = await rest(t.url, 'POST', '/api/organizers', { body: { slug: 'nul-anon', name: NUL } });
    expect(res.status).toBe(401);
  });

  it('a signed-in form post without its CSRF token is still the 403 page', async () => {
    const res = await browser.post('/account/profile', { name: NUL });
    expect(res.status).toBe(403);
  });
});

describe('text that can be stored', () => {
  it('passes untouched: emoji, accents, tabs and newlines', async () => {
    const res = await graphql(t.url, 'mutation($name: String!) { updateViewerProfile(input: { name: $name }) { user { name } } }', {
      privateToken: token,
      variables: { name: 'Zoë 🎟️\tline' },
    });
    expect(res.status).toBe(200);
  });
});

describe('pagination cursors', () => {
  it.each([
    ['a 31 February', ['2031-02-31 00:00:00+00', '0b6f7c3e-2f64-4a0b-9d1e-3f4a5b6c7d8e']],
    ['a NUL', ['2031-03-01 00:00:00+00\u0000', '0b6f7c3e-2f64-4a0b-9d1e-3f4a5b6c7d8e']],
    ['an hour 99', ['2031-03-01 99:00:00+00', '0b6f7c3e-2f64-4a0b-9d1e-3f4a5b6c7d8e']],
  ])('refuses a cursor holding %s as BAD_USER_INPUT, before the database, even when signed with the key', async (_label, values) => {
    const after = encodeCursor(values, byStart('Query.events', 'ASC'), t.get(CursorCodec));
    const res = await graphql(t.url, 'query($after: String) { events(first: 5, after: $after) { nodes { id } } }', {
      variables: { after },
    });
    expect(res.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(res.body.errors?.[0]?.extensions?.reason).toBe('INVALID_CURSOR');
  });
});
