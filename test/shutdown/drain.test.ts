import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createTestDatabase, TestDatabase } from '../support/database.js';
import { runCli, ServerProcess, startServer, waitForHttp, waitForOutput } from '../support/processes.js';
import { RawConnection } from '../support/raw-http.js';
import { freePort, TEST_SECRET_KEY } from '../support/test-app.js';
import { missingOrganizers, Traffic } from './traffic.js';

const embedded = !process.env.DATABASE_URL;
/** SHUTDOWN_TIMEOUT_SECONDS of these servers: the most time from the signal to exit. */
const BOUND_SECONDS = 10;

interface Running {
  server: ServerProcess;
  port: number;
  url: string;
}

describe('SIGTERM under load (the real server process)', () => {
  let db: TestDatabase;
  let env: Record<string, string>;
  let token: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    env = { ...db.env, SECRET_KEY: TEST_SECRET_KEY };
    const user = await runCli(
      env,
      'users:create',
      '--username',
      'drain',
      '--email',
      'drain@example.com',
      '--name',
      'Drain',
      '--password',
      'correct horse battery staple',
    );
    expect(user.code).toBe(0);
    const created = await runCli(env, 'tokens:create', '--user', 'drain', '--name', 'load', '--scopes', 'api');
    expect(created.code).toBe(0);
    token = created.json.token as string;
  });
  afterAll(() => db.drop());

  async function start(extra: Record<string, string> = {}): Promise<Running> {
    const port = await freePort();
    const server = startServer({
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      SHUTDOWN_TIMEOUT_SECONDS: String(BOUND_SECONDS),
      ...extra,
    });
    const url = `http://127.0.0.1:${port}`;
    await waitForHttp(`${url}/healthz`, server);
    return { server, port, url };
  }

  /** The lock is gone and a new server on the same database has every write the old one acknowledged. */
  async function expectWritesKept(slugs: string[]): Promise<void> {
    if (embedded) expect(existsSync(join(db.env.DATA_DIR!, 'agora.lock'))).toBe(false);
    const again = await start();
    try {
      expect(await missingOrganizers(again.url, token, slugs)).toEqual([]);
    } finally {
      again.server.child.kill('SIGTERM');
      await again.server.exited;
    }
  }

  it('answers requests waiting unread on idle keep-alive connections and in pipelines, fails readiness, then closes each connection cleanly', async () => {
    const { server, port } = await start();
    const traffic = new Traffic(port, token, 'light');
    const idle = await Promise.all(Array.from({ length: 8 }, () => traffic.open()));
    const pipelined = await Promise.all(Array.from({ length: 4 }, () => traffic.open()));
    const probe = await traffic.open();
    for (const connection of [...idle, ...pipelined]) await traffic.send(connection, [traffic.health()]);
    await traffic.send(probe, [traffic.readiness()]);

    // In the kernel before the signal, which the server receives before it has read them.
    const settled = [
      ...idle.map((c, i) => traffic.send(c, [i % 2 ? traffic.write() : traffic.read()])),
      ...pipelined.map((c) => traffic.send(c, [traffic.read(), traffic.write(), traffic.health()])),
    ];
    traffic.signal(() => server.child.kill('SIGTERM'));
    await waitForOutput(server, /Shutting down/);
    const readiness = traffic.send(probe, [traffic.readiness()]);

    const code = await server.exited;
    const exitMs = performance.now() - traffic.signalAt;
    await Promise.all([...settled, readiness]);

    expect(traffic.sentBeforeSignal()).toHaveLength(8 + 4 * 3 + 13);
    expect(traffic.exchanges.map((e) => traffic.problem(e)).filter(Boolean)).toEqual([]);
    const drainingReadiness = traffic.exchanges.at(-1)!.response!;
    expect(drainingReadiness.status).toBe(503);
    expect(drainingReadiness.headers.connection).toBe('close');
    // Each connection ends with a FIN: after a response saying `Connection: close` when the server
    // answered it during the drain, or after the idle grace when it answered before the signal.
    for (const connection of [...idle, ...pipelined, probe]) {
      await connection.closed;
      expect(connection.closedBy).toBe('end');
    }
    expect(code).toBe(0);
    expect(exitMs).toBeLessThan(BOUND_SECONDS * 1000);
    expect(server.output()).toMatch(/"msg":"Stopped"/);
    expect(traffic.acknowledgedWrites()).toHaveLength(4 + 4);
    await expectWritesKept(traffic.acknowledgedWrites());
  });

  it('drops nothing sent before the signal on a busy server, tells keep-alive clients to go, refuses new connections and keeps every acknowledged write', async () => {
    const { server, port } = await start();
    const traffic = new Traffic(port, token, 'busy');
    const mix = (n: number) => (n % 3 === 0 ? traffic.write() : n % 3 === 1 ? traffic.read() : traffic.health());
    const idle = await Promise.all(Array.from({ length: 16 }, () => traffic.open()));
    const pipelined = await Promise.all(Array.from({ length: 8 }, () => traffic.open()));
    for (const connection of [...idle, ...pipelined]) await traffic.send(connection, [traffic.health()]);

    const busy = Array.from({ length: 32 }, () => traffic.busyClient(mix));
    await new Promise((r) => setTimeout(r, 1500));
    const settled = [
      ...idle.map((c) => traffic.send(c, [traffic.write()])),
      ...pipelined.map((c) => traffic.send(c, [traffic.write(), traffic.read(), traffic.write()])),
    ];
    traffic.signal(() => server.child.kill('SIGTERM'));

    const code = await server.exited;
    const exitMs = performance.now() - traffic.signalAt;
    await Promise.all([...busy, ...settled]);

    const sent = traffic.sentBeforeSignal();
    const figures = {
      requests: traffic.exchanges.length,
      sentBeforeSignal: sent.length,
      inFlightAtSignal: traffic.inFlightAtSignal().length,
      answeredAfterSignal: traffic.exchanges.filter((e) => e.response && e.response.receivedAt > traffic.signalAt).length,
      newConnectionsAfterSignal: traffic.afterSignal,
      writesAcknowledged: traffic.acknowledgedWrites().length,
      exitMs: Math.round(exitMs),
    };
    console.log(`shutdown under load (${embedded ? 'embedded' : 'PostgreSQL'}): ${JSON.stringify(figures)}`);

    expect(traffic.exchanges.map((e) => traffic.problem(e)).filter(Boolean)).toEqual([]);
    expect(figures.inFlightAtSignal).toBeGreaterThanOrEqual(16 + 8 * 3);
    expect(traffic.afterSignal.accepted).toBe(0);
    expect(traffic.afterSignal.refused).toBe(32);
    for (const connection of new Set(traffic.exchanges.map((e) => e.connection))) {
      await connection.closed;
      expect(connection.closedBy).toBe('end');
    }
    expect(code).toBe(0);
    expect(exitMs).toBeLessThan(BOUND_SECONDS * 1000);
    await expectWritesKept(traffic.acknowledgedWrites());
  });

  it('cuts a request still running at SHUTDOWN_TIMEOUT_SECONDS, exits 1 within it and still closes the database', async () => {
    const { server, port } = await start({ SHUTDOWN_TIMEOUT_SECONDS: '2' });
    const stuck = await RawConnection.open(port);
    // Headers of a request whose body never comes: in progress, and never finished.
    stuck.writeRaw(`POST /graphql HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"query":`);
    await new Promise((r) => setTimeout(r, 200));
    const signalAt = performance.now();
    server.child.kill('SIGTERM');
    const code = await server.exited;
    const exitMs = performance.now() - signalAt;
    expect(code).toBe(1);
    expect(exitMs).toBeLessThan(2000 + 500);
    expect(server.output()).toMatch(/still running after/);
    expect(server.output()).toMatch(/"msg":"Stopped"/);
    await stuck.closed;
    if (embedded) expect(existsSync(join(db.env.DATA_DIR!, 'agora.lock'))).toBe(false);
  });
});
