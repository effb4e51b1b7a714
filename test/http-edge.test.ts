import { connect } from 'node:net';
import { createUser, createUserWithToken } from './support/fixtures.js';
import { registerApp } from './support/oauth.js';
import { graphql } from './support/http.js';
import { startTestApp, TestApp } from './support/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

/** Sends bytes exactly as given (fetch refuses malformed headers) and returns status line, headers and body. */
function rawRequest(
  url: string,
  head: Buffer | string,
  body = '',
): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let response = '';
    socket.on('data', (d) => (response += d.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => {
      const split = response.indexOf('\r\n\r\n');
      const [statusLine, ...lines] = response.slice(0, split).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
      resolve({ status: Number(statusLine!.split(' ')[1]), headers, body: response.slice(split + 4) });
    });
    socket.write(head);
    socket.end(body);
  });
}

function graphqlHead(extraHeaderLines: Buffer | string, body: string): Buffer {
  return Buffer.concat([
    Buffer.from(
      `POST /graphql HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`,
    ),
    Buffer.isBuffer(extraHeaderLines) ? extraHeaderLines : Buffer.from(extraHeaderLines, 'latin1'),
    Buffer.from('\r\n'),
  ]);
}

const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none';script-src 'self';style-src 'self';img-src 'self' data:;font-src 'self';connect-src 'self';form-action 'self';frame-ancestors 'none';base-uri 'none'",
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'origin-agent-cluster': '?1',
  'referrer-policy': 'same-origin',
  'x-content-type-options': 'nosniff',
  'x-dns-prefetch-control': 'off',
  'x-download-options': 'noopen',
  'x-frame-options': 'DENY',
  'x-permitted-cross-domain-policies': 'none',
  'x-xss-protection': '0',
};

/** The security headers and a request id, as every answer carries them. */
function expectHouseHeaders(headers: Record<string, string> | Headers): void {
  const get = (name: string) => (headers instanceof Headers ? headers.get(name) : (headers[name] ?? null));
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) expect([name, get(name)]).toEqual([name, value]);
  expect(get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
}

const BODY = JSON.stringify({ query: '{ viewer { id } }' });

describe('malformed requests are answered without a 500', () => {
  it('a token with a CR in the middle of its header is refused by the HTTP parser', async () => {
    const { token } = await createUserWithToken(t);
    const res = await rawRequest(t.url, graphqlHead(`Private-Token: ${token.slice(0, 10)}\r${token.slice(10)}\r\n`, BODY), BODY);
    expect(res.status).toBe(400);
  });

  it('a header line split by CR LF cannot smuggle a second credential', async () => {
    const { token } = await createUserWithToken(t);
    const res = await rawRequest(t.url, graphqlHead(`Private-Token: x\r\n Authorization: Bearer ${token}\r\n`, BODY), BODY);
    expect([400, 401]).toContain(res.status);
  });

  it('a 64 KB header gets 431 as a GraphQL error, with the security headers and a request id', async () => {
    const res = await rawRequest(t.url, graphqlHead(`Private-Token: ${'a'.repeat(64 * 1024)}\r\n`, BODY), BODY);
    expect(res.status).toBe(431);
    expectHouseHeaders(res.headers);
    expect(JSON.parse(res.body)).toEqual({
      errors: [{ message: 'The request headers are larger than 16 KB', extensions: { code: 'BAD_REQUEST' } }],
    });
  });

  it('a 64 KB token within the header limit of a proxy still gets the exact 401', async () => {
    const res = await graphql(t.url, '{ viewer { id } }', { privateToken: 'a'.repeat(8 * 1024) });
    expect(res.status).toBe(401);
    expect(res.text).toBe('{"message":"401 Unauthorized"}');
  });

  it.each([
    ['Private-Token', Buffer.from('Private-Token: agora_pat_t\u00f6k\u00e9n\u2603\r\n', 'utf8')],
    ['Authorization', Buffer.from('Authorization: Bearer \u00fcber-token\r\n', 'utf8')],
    ['Private-Token (latin-1 bytes)', Buffer.from('Private-Token: \xff\xfe\xe9\r\n', 'latin1')],
  ])('non-ASCII in %s gets the exact 401', async (_name, line) => {
    const res = await rawRequest(t.url, graphqlHead(line, BODY), BODY);
    expect(res.status).toBe(401);
    expect(res.body).toBe('{"message":"401 Unauthorized"}');
  });

  describe('a body that is not valid JSON gets 400 saying so, in the shape of its endpoint', () => {
    const post = (path: string) =>
      fetch(`${t.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query": ' });

    it('/graphql: a GraphQL error', async () => {
      const res = await post('/graphql');
      expect(res.status).toBe(400);
      const body = (await res.json()) as { errors: { message: string; extensions: { code: string } }[] };
      expect(body.errors).toHaveLength(1);
      expect(body.errors[0]!.message).toMatch(/not valid JSON/);
      expect(body.errors[0]!.extensions.code).toBe('BAD_REQUEST');
    });

    it.each(['/oauth/token', '/oauth/revoke', '/oauth/introspect'])('%s: an OAuth invalid_request, not cached', async (path) => {
      const res = await post(path);
      expect(res.status).toBe(400);
      expect(res.headers.get('cache-control')).toBe('no-store');
      const body = (await res.json()) as Record<string, string>;
      expect(Object.keys(body).sort()).toEqual(['error', 'error_description']);
      expect(body.error).toBe('invalid_request');
      expect(body.error_description).toMatch(/not valid JSON/);
    });

    it('elsewhere (the legacy API): the status line and what is wrong', async () => {
      const res = await post('/api/events');
      expect(res.status).toBe(400);
      const body = (await res.json()) as Record<string, string>;
      expect(body.message).toBe('400 Bad Request');
      expect(body.error).toMatch(/not valid JSON/);
    });
  });

  it('an unknown path gets 404 with a JSON message', async () => {
    const res = await fetch(`${t.url}/nope`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ message: '404 Not Found' });
  });

  it.each([
    ['GET', '/oauth/token', 'POST'],
    ['PUT', '/graphql', 'GET, HEAD, POST'],
    ['DELETE', '/api/user', 'GET, HEAD'],
  ])('%s %s, a path that answers other methods, gets 405 with Allow: %s', async (method, path, allow) => {
    const res = await fetch(`${t.url}${path}`, { method });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe(allow);
    expect(await res.json()).toEqual({ message: '405 Method Not Allowed' });
  });

  describe("paths the router refuses before any route runs: answered by the application, not in Fastify's own shape", () => {
    it.each([
      ['not valid percent-encoding', '/api/events/%zz', 400, '400 Bad Request'],
      ['a lone surrogate as WTF-8 bytes', '/api/organizers/%ED%A0%80', 400, '400 Bad Request'],
      ['a path parameter over 100 characters', `/api/events/${'a'.repeat(101)}`, 414, '414 URI Too Long'],
    ])('%s: the REST error shape with the security headers and a request id', async (_what, path, status, message) => {
      const res = await fetch(`${t.url}${path}`);
      expect(res.status).toBe(status);
      expectHouseHeaders(res.headers);
      const body = (await res.json()) as Record<string, string>;
      expect(Object.keys(body).sort()).toEqual(['error', 'message']);
      expect(body.message).toBe(message);
    });

    it.each([
      ['not valid percent-encoding', '/applications/%zz', 400],
      ['a path parameter over 100 characters', `/applications/${'a'.repeat(101)}`, 414],
    ])('a browser opening a page with %s gets an HTML error page', async (_what, path, status) => {
      const res = await fetch(`${t.url}${path}`, { headers: { accept: 'text/html' } });
      expect(res.status).toBe(status);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await res.text()).toContain('Bad request');
    });
  });

  it('a handler’s own 404 stays a 404', async () => {
    const res = await fetch(`${t.url}/api/events/no-such-event`);
    expect(res.status).toBe(404);
    expect(res.headers.get('allow')).toBeNull();
  });

  it.each([
    ['a form over 1 MB', 'application/x-www-form-urlencoded', `login=${'x'.repeat(1_100_000)}`, 413, 'Too large'],
    ['a body of a media type no page reads', 'application/xml', '<login/>', 415, 'Bad request'],
  ])("%s posted to a page gets an HTML error page, not the APIs' JSON", async (_what, type, body, status, title) => {
    const res = await fetch(`${t.url}/sign-in`, { method: 'POST', headers: { 'content-type': type }, body });
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(await res.text()).toContain(title);
  });

  describe('a body field named __proto__ is ignored like any field the endpoint does not read', () => {
    it.each([
      ['a form', 'application/x-www-form-urlencoded', '__proto__=x&client_id=c'],
      ['JSON', 'application/json', '{"__proto__":{"x":1},"client_id":"c"}'],
    ])('%s to /oauth/token: the RFC 6749 answer to the rest of the request', async (_what, type, body) => {
      const res = await fetch(`${t.url}/oauth/token`, { method: 'POST', headers: { 'content-type': type }, body });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: 'invalid_request', error_description: 'grant_type is required' });
    });

    it('a form to a page: the page answers (here, the CSRF check)', async () => {
      const res = await fetch(`${t.url}/sign-in`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: '__proto__=x&login=a&password=b',
      });
      expect(res.status).toBe(403);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    });
  });

  it('a body over 1 MB gets 413', async () => {
    const res = await fetch(`${t.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: `{ __typename } #${'x'.repeat(1_100_000)}` }),
    });
    expect(res.status).toBe(413);
  });
});

describe("requests Node's HTTP parser refuses are answered in the house shape, not Fastify's", () => {
  const request = (lines: string) => rawRequest(t.url, `${lines}\r\n\r\n`);

  it('an unknown method on /graphql: a GraphQL error', async () => {
    const res = await request('FOO /graphql HTTP/1.1\r\nHost: localhost');
    expect(res.status).toBe(400);
    expectHouseHeaders(res.headers);
    expect(res.headers.connection).toBe('close');
    expect(JSON.parse(res.body)).toEqual({
      errors: [{ message: 'The request method is not one this server knows', extensions: { code: 'BAD_REQUEST' } }],
    });
  });

  it('an unknown method on /oauth/token: an RFC 6749 invalid_request, not stored', async () => {
    const res = await request('FOO /oauth/token HTTP/1.1\r\nHost: localhost');
    expect(res.status).toBe(400);
    expectHouseHeaders(res.headers);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(JSON.parse(res.body)).toEqual({
      error: 'invalid_request',
      error_description: 'The request method is not one this server knows',
    });
  });

  it('a Content-Length that is not a number on the REST API: the REST error shape', async () => {
    const res = await request('POST /api/organizers HTTP/1.1\r\nHost: localhost\r\nContent-Length: abc');
    expect(res.status).toBe(400);
    expectHouseHeaders(res.headers);
    expect(JSON.parse(res.body)).toEqual({ message: '400 Bad Request', error: 'Content-Length is not one number' });
  });

  it('a malformed request line from a browser: an HTML error page', async () => {
    const res = await request('GET /sign in HTTP/1.1\r\nHost: localhost\r\nAccept: text/html');
    expect(res.status).toBe(400);
    expectHouseHeaders(res.headers);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toContain('Bad request');
  });

  it('an HTTP/1.1 request without Host: a 400 in the endpoint’s shape (Node answered a bare 400)', async () => {
    const res = await request('POST /oauth/token HTTP/1.1\r\nConnection: close');
    expect(res.status).toBe(400);
    expectHouseHeaders(res.headers);
    expect(JSON.parse(res.body)).toEqual({ error: 'invalid_request', error_description: 'An HTTP/1.1 request must have a Host header' });
  });

  it('an Expect other than 100-continue is ignored, not answered with a bare 417', async () => {
    const res = await request('GET /healthz HTTP/1.1\r\nHost: localhost\r\nExpect: teapot\r\nConnection: close');
    expect(res.status).toBe(200);
    expectHouseHeaders(res.headers);
  });

  it('CONNECT is refused with an answer, not a dropped connection', async () => {
    const res = await request('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443');
    expect(res.status).toBe(400);
    expectHouseHeaders(res.headers);
    expect(JSON.parse(res.body)).toEqual({ message: '400 Bad Request', error: 'This server is not a proxy: CONNECT is not supported' });
  });
});

describe('HTTP Basic client credentials pass the header text boundary', () => {
  const basic = (text: string | Buffer) => `Basic ${Buffer.from(text).toString('base64')}`;
  const post = (path: string, authorization: string) =>
    fetch(`${t.url}${path}`, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=authorization_code&code=x&redirect_uri=http%3A%2F%2Flocalhost%2Fcb&token=y',
    });

  it.each(['/oauth/token', '/oauth/revoke', '/oauth/introspect', '/oauth/device_authorization'])(
    'a NUL in the client id (Basic ADoA) at %s: invalid_client with the Basic challenge, nothing logged as an error',
    async (path) => {
      const before = t.logs.length;
      const res = await post(path, 'Basic ADoA');
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Basic realm="agora", charset="UTF-8"');
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(await res.json()).toEqual({
        error: 'invalid_client',
        error_description: 'The client id in HTTP Basic must not contain the NUL character (U+0000)',
      });
      expect(t.logs.slice(before).filter((line) => (line.level as number) >= 50)).toEqual([]);
    },
  );

  it.each([
    [
      'a percent-encoded NUL in the secret',
      basic('client:a%00b'),
      'The client secret in HTTP Basic must not contain the NUL character (U+0000)',
    ],
    [
      'a lone surrogate, percent-encoded',
      basic('client:%ED%A0%80'),
      'The client secret in HTTP Basic must be valid percent-encoding of UTF-8 text',
    ],
    [
      'a control character',
      basic('cli\u0007ent:s'),
      'The client id in HTTP Basic must not contain control characters (other than tab and line breaks)',
    ],
    ['bytes that are not UTF-8', basic(Buffer.from([0xff, 0x3a, 0x61])), 'HTTP Basic credentials must be UTF-8 text'],
    ['base64 that is not canonical (stray bits)', 'Basic Oh==', 'HTTP Basic credentials must be canonical base64'],
    ['base64 of a length no bytes have', 'Basic YTpi0', 'HTTP Basic credentials must be canonical base64'],
    ['base64 with wrong padding', 'Basic YTpiYw=', 'HTTP Basic credentials must be canonical base64'],
    ['no colon', basic('client'), 'HTTP Basic credentials must be the client id and secret separated by a colon'],
    ['credentials over 1 KB', basic(`client:${'s'.repeat(2000)}`), 'HTTP Basic credentials must be at most 1024 characters'],
  ])('%s: invalid_client saying so', async (_what, authorization, description) => {
    const res = await post('/oauth/token', authorization);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Basic /);
    expect(await res.json()).toEqual({ error: 'invalid_client', error_description: description });
  });

  it('accepts the credentials with or without their base64 padding', async () => {
    const owner = await createUser(t);
    const app = await registerApp(t, owner.id);
    // The same client id with its first n characters percent-encoded (2 more bytes each): of three lengths
    // in a row, at least one is not a multiple of 3, so its base64 has padding.
    const percentEncoded = (n: number) =>
      [...app.clientId.slice(0, n)].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('') + app.clientId.slice(n);
    const encoded = [0, 1, 2]
      .map((n) => Buffer.from(`${percentEncoded(n)}:${app.clientSecret}`).toString('base64'))
      .find((text) => text.endsWith('='))!;
    for (const authorization of [`Basic ${encoded}`, `Basic ${encoded.replace(/=+$/, '')}`]) {
      const res = await post('/oauth/token', authorization);
      // Past client authentication: the made-up code is what is refused.
      expect([res.status, ((await res.json()) as { error: string }).error]).toEqual([400, 'invalid_grant']);
    }
  });
});

describe('logs', () => {
  it('never contain a token, whether sent in a header or in the query string', async () => {
    const { token } = await createUserWithToken(t);
    await graphql(t.url, '{ viewer { id } }', { privateToken: token });
    await graphql(t.url, '{ viewer { id } }', { bearer: token });
    await graphql(t.url, '{ viewer { id } }', { path: `/graphql?private_token=${token}&access_token=${token}` });
    const text = JSON.stringify(t.logs);
    expect(t.logs.length).toBeGreaterThan(3);
    expect(text).not.toContain(token);
    expect(text).toContain('private_token=[REDACTED]');
  });
});

describe('security headers', () => {
  it.each([
    ['an API answer', () => graphql(t.url, '{ __typename }')],
    ['a 401', () => graphql(t.url, '{ viewer { id } }')],
    [
      'a body that is not JSON',
      () => fetch(`${t.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' }),
    ],
    ['an unknown path', () => fetch(`${t.url}/no-such-path`)],
    ['a page', () => fetch(`${t.url}/sign-in`)],
    ['a legacy REST answer', () => fetch(`${t.url}/api/events`)],
  ])('%s carries the same set, with a request id and no HSTS over http', async (_label, send) => {
    const { headers } = await send();
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) expect([name, headers.get(name)]).toEqual([name, value]);
    expect(headers.get('x-request-id')).toBeTruthy();
    expect(headers.get('strict-transport-security')).toBeNull();
    expect(headers.get('x-powered-by')).toBeNull();
  });
});
