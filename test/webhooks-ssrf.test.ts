import { execFileSync } from 'node:child_process';
import type { LookupAddress } from 'node:dns';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { isIP, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { newWebhookSecret } from '../src/webhooks/webhook-secrets.js';
import { postWebhook, targetProblem, type ResolveHost, type TargetPolicy } from '../src/outbound/outbound.js';
import { signedHeaders } from '../src/webhooks/signed-headers.js';
import { eventually } from './support/eventually.js';

// The outbound client against real sockets in this process: refused targets never open a connection to
// a server listening on loopback (connections counted), a name is resolved once and the socket goes to
// the address that was checked, and a receiver's redirects, slowness and size are bounded.

const publicOnly: TargetPolicy = { allowHttp: true, allowPrivateTargets: false };
// Tests run their receivers on loopback: the operator setting for on-premise receivers lets them through.
const onPremise: TargetPolicy = { allowHttp: true, allowPrivateTargets: true };

interface Arrival {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

interface Receiver {
  server: Server;
  port: number;
  /** TCP connections accepted, whether or not a request followed. */
  connections: number;
  arrivals: Arrival[];
  close(): Promise<void>;
}

type Handler = (request: IncomingMessage, response: ServerResponse, body: string) => void;

/** An HTTP server on loopback (by default dual-stack `::`, so 127.0.0.1, ::1 and ::ffff:127.0.0.1 all reach it). */
async function startReceiver(
  handler: Handler = (_q, s) => s.end('ok'),
  host = '::',
  server: Server = createServer(),
  port = 0,
): Promise<Receiver> {
  const receiver: Receiver = { server, port: 0, connections: 0, arrivals: [], close: () => closeServer(server) };
  server.on('connection', () => receiver.connections++);
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      receiver.arrivals.push({ method: request.method!, url: request.url!, headers: request.headers, body });
      handler(request, response, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  receiver.port = (server.address() as AddressInfo).port;
  return receiver;
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** A resolver that knows a few test names; `answers` may change between calls (rebinding). */
function testResolver(answers: Record<string, string[] | ((call: number) => string[])>): ResolveHost & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (hostname: string): Promise<LookupAddress[]> => {
    calls.push(hostname);
    const answer = answers[hostname];
    if (!answer) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    const addresses = typeof answer === 'function' ? answer(calls.filter((c) => c === hostname).length) : answer;
    return addresses.map((address) => ({ address, family: isIP(address) }));
  };
  return Object.assign(resolve, { calls });
}

const json = '{"type":"webhook.test","data":{"message":"Hello from Agora"}}';

function request(url: string, headers: Record<string, string> = {}) {
  return { url, headers, body: json };
}

describe('refused targets', () => {
  let receiver: Receiver;
  beforeAll(async () => (receiver = await startReceiver()));
  afterAll(() => receiver.close());
  beforeEach(() => (receiver.connections = 0));

  const names = { 'rebind.test': ['127.0.0.1'], receiver: ['::1'], 'mapped.test': ['::ffff:127.0.0.1'] };
  const resolve = testResolver(names);
  const cases: [string, string][] = [
    ['http://127.0.0.1:PORT/hook', '127.0.0.1 is a loopback address'],
    ['http://[::1]:PORT/hook', '::1 is a loopback address'],
    ['http://[::ffff:127.0.0.1]:PORT/hook', '::ffff:7f00:1 (127.0.0.1) is a loopback address'],
    ['http://[::ffff:7f00:1]:PORT/hook', '::ffff:7f00:1 (127.0.0.1) is a loopback address'],
    ['http://0.0.0.0:PORT/hook', '0.0.0.0 is an unspecified address'],
    ['http://[::]:PORT/hook', ':: is an unspecified address'],
    ['http://2130706433:PORT/hook', '127.0.0.1 is a loopback address'],
    ['http://localhost:PORT/hook', 'localhost is a local name'],
    ['http://rebind.test:PORT/hook', 'rebind.test does not resolve to a public address'],
    ['http://mapped.test:PORT/hook', 'mapped.test does not resolve to a public address'],
    ['http://receiver:PORT/hook', 'receiver does not resolve to a public address'],
  ];

  it.each(cases)('refuses %s (%s) at registration and at delivery, and no connection reaches the server', async (template, problem) => {
    const url = template.replace('PORT', String(receiver.port));
    expect(await targetProblem(url, publicOnly, { resolve })).toBe(problem);
    const response = await postWebhook(request(url), publicOnly, { resolve });
    expect(response).toEqual({
      outcome: 'failed',
      status: null,
      bodyExcerpt: null,
      error: `refused: ${problem}`,
      durationMs: expect.any(Number),
    });
    expect(receiver.connections).toBe(0);

    // The control: the same URL does reach the server when the operator allows private targets.
    const allowed = await postWebhook(request(url), onPremise, {
      resolve: testResolver({ ...names, localhost: ['127.0.0.1'] }),
      timeoutMs: 2000,
    });
    expect(allowed).toMatchObject({ outcome: 'succeeded', status: 200, bodyExcerpt: 'ok' });
    expect(receiver.connections).toBe(1);
  });

  it.each([
    ['http://169.254.169.254/latest/meta-data/', '169.254.169.254 is a link-local address'],
    ['http://10.0.0.1/', '10.0.0.1 is a private address'],
    ['https://metadata.google.internal/computeMetadata/v1/', 'metadata.google.internal is a cloud metadata service'],
    ['https://[fd00:ec2::254]/latest/meta-data/', 'fd00:ec2::254 is a unique local address'],
  ])('refuses %s (%s) at registration and at delivery', async (url, problem) => {
    expect(await targetProblem(url, publicOnly, { resolve })).toBe(problem);
    expect(await postWebhook(request(url), publicOnly, { resolve })).toMatchObject({
      outcome: 'failed',
      status: null,
      error: `refused: ${problem}`,
    });
  });

  it('refuses http:// unless the operator allows it, and says why a name does not resolve', async () => {
    const strict: TargetPolicy = { allowHttp: false, allowPrivateTargets: false };
    expect(await targetProblem('http://hooks.example.com/', strict, { resolve })).toBe('the URL must start with https://');
    expect(await postWebhook(request('http://hooks.example.com/'), strict, { resolve })).toMatchObject({
      error: 'refused: the URL must start with https://',
    });
    // No such name, and a name with a private address, get the same words: nothing of the internal DNS shows.
    for (const host of ['nowhere.test', 'rebind.test']) {
      expect(await targetProblem(`https://${host}/`, publicOnly, { resolve })).toBe(`${host} does not resolve to a public address`);
      expect(await postWebhook(request(`https://${host}/`), publicOnly, { resolve })).toMatchObject({
        outcome: 'failed',
        error: `refused: ${host} does not resolve to a public address`,
      });
    }
  });

  it.each([
    ['http://169.254.169.254/latest/meta-data/', '169.254.169.254 is a cloud metadata address'],
    ['http://[fd00:ec2::254]/latest/meta-data/', 'fd00:ec2::254 is a cloud metadata address'],
    ['http://metadata.google.internal/computeMetadata/v1/', 'metadata.google.internal is a cloud metadata service'],
    ['http://metadata.test/', 'metadata.test does not resolve to an address webhooks may use'],
  ])('refuses the cloud metadata service %s even where private targets are allowed', async (url, problem) => {
    const onPremiseResolve = testResolver({ 'metadata.test': ['169.254.169.254'] });
    expect(await targetProblem(url, onPremise, { resolve: onPremiseResolve })).toBe(url.includes('metadata.test') ? null : problem);
    expect(await postWebhook(request(url), onPremise, { resolve: onPremiseResolve, timeoutMs: 2000 })).toMatchObject({
      outcome: 'failed',
      status: null,
      error: `refused: ${problem}`,
    });
  });
});

describe('DNS rebinding', () => {
  let receiver: Receiver;
  beforeAll(async () => (receiver = await startReceiver()));
  afterAll(() => receiver.close());
  beforeEach(() => (receiver.connections = 0));

  it.each([[['93.184.215.14', '127.0.0.1']], [['127.0.0.1', '93.184.215.14']], [['2606:2800:21f:cb07:6820:80da:af6b:8b2c', '::1']]])(
    'refuses a name when any of its addresses %j is not public, whatever the order',
    async (addresses) => {
      const resolve = testResolver({ 'rebind.test': addresses });
      const url = `http://rebind.test:${receiver.port}/hook`;
      const problem = 'rebind.test does not resolve to a public address';
      expect(await targetProblem(url, publicOnly, { resolve })).toBe(problem);
      expect(await postWebhook(request(url), publicOnly, { resolve })).toMatchObject({ outcome: 'failed', error: `refused: ${problem}` });
      expect(receiver.connections).toBe(0);
    },
  );

  it('resolves once and connects to the checked public address, not to the loopback address the name turns into', async () => {
    const resolve = testResolver({ 'rebind.test': (call) => (call === 1 ? ['93.184.215.14'] : ['127.0.0.1']) });
    const response = await postWebhook(request(`http://rebind.test:${receiver.port}/hook`), publicOnly, { resolve, timeoutMs: 300 });
    // Offline the public address answers nothing (timed out, unreachable): what matters is where it went.
    expect(response.outcome).toBe('failed');
    expect(resolve.calls).toEqual(['rebind.test']);
    expect(receiver.connections).toBe(0);
  });

  it('sends the request to the address it resolved first, with the name in the Host header', async () => {
    // Two servers on the same port, one on 127.0.0.2 and one on 127.0.0.1: the name turns from the first into the second.
    const first = await startReceiver(undefined, '127.0.0.2');
    const second = await startReceiver(undefined, '127.0.0.1', createServer(), first.port);
    try {
      const resolve = testResolver({ 'rebind.test': (call) => (call === 1 ? ['127.0.0.2'] : ['127.0.0.1']) });
      const response = await postWebhook(request(`http://rebind.test:${first.port}/hook`), onPremise, { resolve });
      expect(response).toMatchObject({ outcome: 'succeeded', status: 200 });
      expect(resolve.calls).toEqual(['rebind.test']);
      expect(first.arrivals.map((a) => a.headers.host)).toEqual([`rebind.test:${first.port}`]);
      expect(second.connections).toBe(0);
    } finally {
      await first.close();
      await second.close();
    }
  });
});

describe('delivery to a receiver', () => {
  const resolve = testResolver({ 'receiver.test': ['127.0.0.1'] });
  const receivers: Receiver[] = [];
  const receive = async (handler?: Handler) => {
    const receiver = await startReceiver(handler);
    receivers.push(receiver);
    return receiver;
  };
  afterEach(async () => {
    for (const receiver of receivers.splice(0)) await receiver.close();
  });

  it('POSTs the body with its headers and a Standard Webhooks signature the library accepts, and keeps the answer', async () => {
    const secret = newWebhookSecret();
    const receiver = await receive((_q, response) => response.writeHead(202, { 'content-type': 'text/plain' }).end('accepted, thank you'));
    const headers = {
      ...signedHeaders([secret], 'msg_6c5b', new Date(), json),
      'User-Agent': 'Agora-Webhooks/1 (+https://agora.example/docs)',
    };
    const response = await postWebhook(
      { url: `http://receiver.test:${receiver.port}/hooks/agora?tenant=7`, headers, body: json },
      onPremise,
      { resolve },
    );

    expect(response).toEqual({
      outcome: 'succeeded',
      status: 202,
      bodyExcerpt: 'accepted, thank you',
      error: null,
      durationMs: expect.any(Number),
    });
    expect(response.durationMs).toBeLessThan(2000);
    const [arrival] = receiver.arrivals;
    expect(arrival).toMatchObject({ method: 'POST', url: '/hooks/agora?tenant=7', body: json });
    expect(arrival!.headers).toMatchObject({
      host: `receiver.test:${receiver.port}`,
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(json)),
      'user-agent': 'Agora-Webhooks/1 (+https://agora.example/docs)',
      'webhook-id': 'msg_6c5b',
    });
    expect(new Webhook(secret).verify(arrival!.body, arrival!.headers as Record<string, string>)).toEqual(JSON.parse(json));
  });

  it('fails a 500 with its status and the first bytes of its answer', async () => {
    const receiver = await receive((_q, response) => response.writeHead(500).end('database down'));
    expect(await postWebhook(request(`http://127.0.0.1:${receiver.port}/`), onPremise)).toMatchObject({
      outcome: 'failed',
      status: 500,
      bodyExcerpt: 'database down',
      error: null,
    });
  });

  it('does not follow a redirect to a private address', async () => {
    const receiver = await receive((_q, response) => response.writeHead(302, { location: 'http://10.0.0.1/' }).end());
    expect(await postWebhook(request(`http://127.0.0.1:${receiver.port}/`), onPremise)).toMatchObject({
      outcome: 'failed',
      status: 302,
      error: 'redirect to http://10.0.0.1/ not followed',
    });
  });

  it('does not follow a redirect even where it would be allowed: nothing is requested there', async () => {
    const elsewhere = await receive();
    const receiver = await receive((_q, response) => response.writeHead(307, { location: `http://127.0.0.1:${elsewhere.port}/` }).end());
    expect(await postWebhook(request(`http://127.0.0.1:${receiver.port}/`), onPremise)).toMatchObject({
      outcome: 'failed',
      status: 307,
      error: `redirect to http://127.0.0.1:${elsewhere.port}/ not followed`,
    });
    expect(receiver.arrivals).toHaveLength(1);
    expect(elsewhere.connections).toBe(0);
  });

  it('times out a receiver that does not answer, at the deadline', async () => {
    const receiver = await receive(() => undefined);
    const response = await postWebhook(request(`http://127.0.0.1:${receiver.port}/`), onPremise, { timeoutMs: 400 });
    expect(response).toMatchObject({ outcome: 'failed', status: null, bodyExcerpt: null, error: 'timed out after 400 ms' });
    expect(response.durationMs).toBeGreaterThanOrEqual(390);
    expect(response.durationMs).toBeLessThan(1500);
  });

  it('counts resolution against the deadline: a resolver that never answers times out', async () => {
    const response = await postWebhook(request('http://silent.test/'), onPremise, {
      resolve: () => new Promise(() => undefined),
      timeoutMs: 1000,
    });
    expect(response).toMatchObject({ outcome: 'failed', error: 'timed out after 1 s' });
    expect(response.durationMs).toBeLessThan(1800);
  });

  it('keeps the status of a receiver that answered 200 and then trickles its body past the deadline', async () => {
    const receiver = await receive((_q, response) => {
      response.writeHead(200);
      response.write('received; ');
      setTimeout(() => response.write('still writing'), 100).unref();
    });
    const response = await postWebhook(request(`http://127.0.0.1:${receiver.port}/`), onPremise, { timeoutMs: 500 });
    expect(response).toMatchObject({ outcome: 'succeeded', status: 200, bodyExcerpt: 'received; still writing' });
    expect(response.durationMs).toBeLessThan(1500);
  });

  it('reads a 1 MB answer up to 64 KiB and keeps 2,048 characters of it', async () => {
    const receiver = await receive((_q, response) => response.writeHead(200).end('x'.repeat(1024 * 1024)));
    const response = await postWebhook(request(`http://127.0.0.1:${receiver.port}/`), onPremise);
    expect(response).toMatchObject({ outcome: 'succeeded', status: 200, bodyExcerpt: 'x'.repeat(2048), error: null });
  });

  it('stops reading an answer that never ends at 64 KiB and closes the connection', async () => {
    let written = 0;
    let closed = false;
    const receiver = await receive((_q, response) => {
      response.writeHead(200);
      const chunk = Buffer.alloc(16 * 1024, 'y');
      const pump = () => {
        while (!closed && response.write(chunk)) written += chunk.length;
      };
      response.on('drain', pump);
      response.on('close', () => (closed = true));
      pump();
    });
    const response = await postWebhook(request(`http://127.0.0.1:${receiver.port}/`), onPremise, { timeoutMs: 5000 });
    expect(response).toMatchObject({ outcome: 'succeeded', status: 200, bodyExcerpt: 'y'.repeat(2048) });
    expect(response.durationMs).toBeLessThan(2000); // long before the deadline: the cap ended it
    await eventually(() => expect(closed).toBe(true), 2000);
    expect(written).toBeLessThan(64 * 1024 * 1024); // bounded by socket buffers, not by an endless read
  });

  it('decodes the excerpt as UTF-8, invalid bytes and NUL replaced', async () => {
    const receiver = await receive((_q, response) =>
      response.writeHead(400).end(Buffer.from([0x47, 0x72, 0xc3, 0xbc, 0xc3, 0x00, 0xff, 0x21])),
    );
    expect(await postWebhook(request(`http://127.0.0.1:${receiver.port}/`), onPremise)).toMatchObject({
      status: 400,
      bodyExcerpt: 'Grü\ufffd\ufffd\ufffd!',
    });
  });

  it('says "connection refused" for a port nobody listens on', async () => {
    const gone = await startReceiver();
    await gone.close();
    const response = await postWebhook(request(`http://127.0.0.1:${gone.port}/`), onPremise);
    expect(response).toMatchObject({ outcome: 'failed', status: null, bodyExcerpt: null, error: 'connection refused' });
  });

  it('refuses a self-signed certificate, having sent the name in SNI', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agora-webhook-tls-'));
    try {
      execFileSync(
        'openssl',
        [
          ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1'],
          ...['-subj', '/CN=receiver.test', '-addext', 'subjectAltName=DNS:receiver.test'],
          ...['-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')],
        ],
        { stdio: 'ignore' },
      );
      const names: string[] = [];
      const server = createTlsServer({
        key: readFileSync(join(dir, 'key.pem')),
        cert: readFileSync(join(dir, 'cert.pem')),
        SNICallback: (name, done) => {
          names.push(name);
          done(null);
        },
      });
      const receiver = await startReceiver(undefined, '127.0.0.1', server);
      receivers.push(receiver);
      const response = await postWebhook(request(`https://receiver.test:${receiver.port}/`), onPremise, { resolve });
      expect(response).toMatchObject({ outcome: 'failed', status: null, error: 'TLS certificate error: self-signed certificate' });
      expect(names).toEqual(['receiver.test']);
      expect(receiver.arrivals).toHaveLength(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
