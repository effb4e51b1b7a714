import { request } from 'node:http';
import { createServer, Server } from 'node:net';
import { MIGRATIONS } from '../../src/database/migrations/index.js';
import { DEFAULT_RESTART_POLICY } from '../../src/cluster/restart-policy.js';
import { Traffic } from '../shutdown/traffic.js';
import { TEST_PASSWORD } from '../support/fixtures.js';
import { parseMetrics, Sample, valueOf } from '../support/prometheus.js';
import { childrenOf, ServerProcess, startServer, waitForHttp, waitForOutput } from '../support/processes.js';
import { freePort } from '../support/test-app.js';
import { cli, FLEET_SECRET_KEY, scratchDatabase, ScratchDatabase } from './fleet.js';

// WORKERS=2: `node dist/src/main.js` becomes a node:cluster primary with two workers sharing one port
// (src/cluster/). What an operator relies on: both workers serve, /metrics adds them up whichever takes
// the scrape, a dead worker is replaced, SIGTERM drains both, and a crash loop ends.

const METRICS_TOKEN = 'cores-metrics-token-Qm7Zr2Lx9Wp4Vk8Tn3Hd6Js1Bf5Gc0Ya';
const BOUND_SECONDS = 10;

type Line = Record<string, any>;

function lines(server: ServerProcess): Line[] {
  return server
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Line);
}

/** A GET on a connection of its own (the primary hands out connections, not requests, in turn). */
function getOnNewConnection(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string; requestId: string; retryAfter?: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false, headers: { connection: 'close', ...headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode!, body, requestId: String(res.headers['x-request-id']), retryAfter: res.headers['retry-after'] }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * Stops one worker (SIGSTOP) and scrapes twice on new connections: the primary hands them out in turn, so
 * one reaches the running worker (worker 2), which asks the primary for the group's metrics; the stopped
 * worker's part never comes (prom-client waits 5 s), so that scrape answers 503, never a partial sum.
 */
async function expectScrapeUnavailableWhileStopped(
  server: ServerProcess,
  stoppedPid: number,
  scrapeUrl: string,
  headers: Record<string, string> = {},
): Promise<void> {
  process.kill(stoppedPid, 'SIGSTOP');
  const attempts = [0, 1].map(() => getOnNewConnection(scrapeUrl, headers));
  try {
    const first = await Promise.race(attempts);
    expect(first).toMatchObject({ status: 503, retryAfter: '5', body: JSON.stringify({ message: '503 Service Unavailable' }) });
    await waitForOutput(server, /"worker":2.*"msg":"Scrape answered 503: Aggregating the workers' metrics failed/);
  } finally {
    process.kill(stoppedPid, 'SIGCONT');
  }
  // The connection handed to the stopped worker is served once it runs again (a 503 if it asked while
  // the aggregation still waited, a 200 after): nothing is left hanging.
  for (const answer of await Promise.all(attempts)) expect([200, 503]).toContain(answer.status);
}

describe('WORKERS=2 on a PostgreSQL database', () => {
  let db: ScratchDatabase;
  let server: ServerProcess;
  let url: string;
  let port: number;
  let env: Record<string, string>;
  let token: string;
  /** Worker id by pid, as the primary announced them. */
  let workerOf: Map<number, number>;
  /** GET /healthz answered so far (the start-up probe included). */
  let healthChecks = 0;

  /** Which worker logged the completion of each request id. */
  const servedBy = (requestIds: string[]): number[] => {
    const completed = new Map(
      lines(server)
        .filter((l) => l.msg === 'request completed')
        .map((l) => [l.reqId as string, l.worker as number]),
    );
    return requestIds.map((id) => completed.get(id)!);
  };

  async function scrape(): Promise<{ samples: Sample[]; requestId: string }> {
    const res = await getOnNewConnection(`${url}/metrics`, { authorization: `Bearer ${METRICS_TOKEN}` });
    expect(res.status).toBe(200);
    return { samples: parseMetrics(res.body), requestId: res.requestId };
  }

  async function healthz(count: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const res = await getOnNewConnection(`${url}/healthz`);
      expect(res.status).toBe(200);
      ids.push(res.requestId);
      healthChecks++;
    }
    // "request completed" is written once the response has gone: wait for the last one.
    await waitForOutput(server, new RegExp(`"reqId":"${ids.at(-1)}".*"msg":"request completed"`));
    return ids;
  }

  beforeAll(async () => {
    db = await scratchDatabase();
    port = await freePort();
    url = `http://127.0.0.1:${port}`;
    env = { DATABASE_URL: db.url, SECRET_KEY: FLEET_SECRET_KEY };
    server = startServer({
      ...env,
      WORKERS: '2',
      HOST: '127.0.0.1',
      PORT: String(port),
      BASE_URL: url,
      METRICS_TOKEN,
      DATABASE_POOL_SIZE: '4',
      SHUTDOWN_TIMEOUT_SECONDS: String(BOUND_SECONDS),
      LOG_LEVEL: 'info',
    });
    await waitForOutput(server, /"msg":"Started 2 workers/, 120_000);
    await waitForHttp(`${url}/healthz`, server);
    healthChecks++;
    const started = lines(server).find((l) => String(l.msg).startsWith('Started 2 workers'))!;
    workerOf = new Map((started.workers as { worker: number; pid: number }[]).map((w) => [w.pid, w.worker]));

    await cli(env, 'users:create', '--username', 'cores', '--email', 'cores@example.com', '--name', 'Cores', '--password', TEST_PASSWORD);
    token = ((await cli(env, 'tokens:create', '--user', 'cores', '--name', 'load', '--scopes', 'api')) as { token: string }).token;
  });

  afterAll(async () => {
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    await db?.drop();
  });

  it('is one primary with two worker processes; the primary applied the migrations once, before forking', () => {
    expect([...workerOf.keys()].sort()).toEqual(childrenOf(server.child.pid!).sort());
    expect([...workerOf.values()].sort()).toEqual([1, 2]);

    const ready = lines(server).filter((l) => l.msg === 'Database ready');
    const primary = ready.filter((l) => l.role === 'primary');
    expect(primary).toHaveLength(1);
    expect(primary[0]!.pid).toBe(server.child.pid);
    expect(primary[0]!.migrationsApplied).toEqual(MIGRATIONS.map((m) => m.name));
    const workers = ready.filter((l) => l.worker !== undefined);
    expect(workers.map((l) => [l.worker, l.pid, l.migrationsApplied]).sort()).toEqual(
      [...workerOf].map(([pid, worker]) => [worker, pid, []]).sort(),
    );
  });

  it('serves requests from both workers, and every log line of a worker names it and its pid', async () => {
    const ids = await healthz(20);
    const workers = servedBy(ids);
    expect(workers.every((w) => w === 1 || w === 2)).toBe(true);
    expect(new Set(workers)).toEqual(new Set([1, 2]));

    for (const line of lines(server)) {
      if (line.role === 'primary') expect(line.pid).toBe(server.child.pid);
      else expect(workerOf.get(line.pid)).toBe(line.worker);
    }
  });

  it('answers /metrics with the sum of both workers, whichever worker takes the scrape', async () => {
    const scrapes = [];
    for (let i = 0; i < 6; i++) scrapes.push(await scrape());
    await waitForOutput(server, new RegExp(`"reqId":"${scrapes.at(-1)!.requestId}".*"msg":"request completed"`));
    expect(new Set(servedBy(scrapes.map((s) => s.requestId)))).toEqual(new Set([1, 2]));

    // Each worker answered about half of the /healthz requests; every scrape counts all of them.
    const perWorker = lines(server).filter((l) => l.msg === 'incoming request' && l.req?.url === '/healthz');
    const [one, two] = [1, 2].map((w) => perWorker.filter((l) => l.worker === w).length);
    expect(one).toBeGreaterThan(0);
    expect(two).toBeGreaterThan(0);
    expect(one! + two!).toBe(healthChecks);
    for (const { samples } of scrapes) {
      expect(valueOf(samples, 'agora_http_requests_total', { method: 'GET', route: '/healthz', status: '200' })).toBe(healthChecks);
      expect(valueOf(samples, 'agora_http_request_duration_seconds_count', { method: 'GET', route: '/healthz' })).toBe(healthChecks);
      // Gauges of the pools are summed: two pools of DATABASE_POOL_SIZE=4.
      expect(valueOf(samples, 'agora_db_pool_max_connections')).toBe(8);
      // Process and runtime metrics stay one series per worker.
      for (const worker of ['1', '2']) {
        expect(valueOf(samples, 'process_cpu_seconds_total', { worker })).toBeGreaterThan(0);
        expect(samples.some((s) => s.name === 'nodejs_eventloop_lag_p99_seconds' && s.labels.worker === worker)).toBe(true);
      }
      expect(samples.filter((s) => s.name === 'process_resident_memory_bytes')).toHaveLength(2);
    }
  });

  it('answers a scrape 503 with Retry-After, never a partial sum, while a worker cannot answer, and 200 once it can', async () => {
    const [stoppedPid] = [...workerOf].find(([, worker]) => worker === 1)!;
    await expectScrapeUnavailableWhileStopped(server, stoppedPid, `${url}/metrics`, { authorization: `Bearer ${METRICS_TOKEN}` });
    const { samples } = await scrape();
    expect(samples.filter((s) => s.name === 'process_resident_memory_bytes')).toHaveLength(2);
  });

  it('replaces a worker that is killed, and serves from the replacement', async () => {
    const [victimPid, victim] = [...workerOf].find(([, worker]) => worker === 1)!;
    // A worker that dies within 10 s of its start is replaced after a back-off (the last test); this one
    // stands for a worker that has been running, replaced at once. Its first log line came after its fork.
    const firstLine = lines(server).find((l) => l.pid === victimPid)!;
    const livedMs = Date.now() - Date.parse(String(firstLine.time));
    if (livedMs < DEFAULT_RESTART_POLICY.quickExitMs + 500) {
      await new Promise((r) => setTimeout(r, DEFAULT_RESTART_POLICY.quickExitMs + 500 - livedMs));
    }
    process.kill(victimPid, 'SIGKILL');
    await waitForOutput(server, /"msg":"Worker 3 is listening, in place of worker 1"/, 60_000);
    expect(server.output()).toMatch(/"msg":"Worker 1 \(pid \d+\) exited unexpectedly \(killed by SIGKILL\); starting a replacement"/);
    const died = lines(server).find((l) => String(l.msg).startsWith('Worker 1 (pid'))!;
    expect(died).toMatchObject({ level: 50, role: 'primary', worker: victim, workerPid: victimPid, signal: 'SIGKILL', restartInMs: 0 });

    const children = childrenOf(server.child.pid!);
    expect(children).toHaveLength(2);
    expect(children).not.toContain(victimPid);
    const replacementPid = children.find((pid) => !workerOf.has(pid))!;
    expect(lines(server).find((l) => l.worker === 3 && l.msg === 'Database ready')?.pid).toBe(replacementPid);

    const ids = await healthz(10);
    expect(new Set(servedBy(ids))).toEqual(new Set([2, 3]));
    const { samples } = await scrape();
    expect(
      samples
        .filter((s) => s.name === 'process_cpu_seconds_total')
        .map((s) => s.labels.worker)
        .sort(),
    ).toEqual(['2', '3']);
    // The dead worker's counts are gone with it: the sum is of the workers now running.
    expect(valueOf(samples, 'agora_http_requests_total', { method: 'GET', route: '/healthz', status: '200' })).toBeLessThan(healthChecks);
  });

  it('on SIGTERM, drains every worker, answering every request received before it, and exits 0 within the bound', async () => {
    const traffic = new Traffic(port, token, 'cores');
    const mix = (n: number) => (n % 3 === 0 ? traffic.write() : n % 3 === 1 ? traffic.read() : traffic.health());
    const idle = await Promise.all(Array.from({ length: 8 }, () => traffic.open()));
    for (const connection of idle) await traffic.send(connection, [traffic.health()]);
    const busy = Array.from({ length: 8 }, () => traffic.busyClient(mix));
    await new Promise((r) => setTimeout(r, 1000));
    const settled = idle.map((c) => traffic.send(c, [traffic.write(), traffic.read()]));
    traffic.signal(() => server.child.kill('SIGTERM'));

    const code = await server.exited;
    const exitMs = performance.now() - traffic.signalAt;
    await Promise.all([...busy, ...settled]);

    const before = traffic.sentBeforeSignal();
    expect(before.map((e) => traffic.problem(e)).filter(Boolean)).toEqual([]);
    expect(traffic.inFlightAtSignal().length).toBeGreaterThanOrEqual(8 * 2);
    // After the signal a busy client that was told `Connection: close` opens a new connection: refused
    // once the port is closed, served while a worker still listens, or, in the moment between the first
    // and the last worker closing (node:cluster's primary holds the port until then), closed before any
    // worker read it (docs/operations.md, "All cores of one machine"): reset when the request's bytes had
    // arrived, a plain close (FIN) when they had not. Either way no byte of a response came, and the
    // request was not processed.
    const after = traffic.exchanges.filter((e) => !before.includes(e));
    const reset = after.filter((e) => traffic.problem(e));
    for (const e of reset) {
      expect(e.response).toBeUndefined();
      expect(e.error).toMatch(/ECONNRESET|connection closed before the response/);
      expect(traffic.exchanges.filter((x) => x.connection === e.connection)).toEqual([e]);
    }
    const resetWrites = reset.filter((e) => e.kind === 'write').map((e) => e.slug!);
    expect(await db.query('SELECT slug FROM organizers WHERE slug = ANY($1)', [resetWrites])).toEqual([]);
    expect(traffic.afterSignal.refused).toBe(8 - reset.length);
    console.log(
      `SIGTERM with WORKERS=2: ${JSON.stringify({
        sentBeforeSignal: before.length,
        inFlightAtSignal: traffic.inFlightAtSignal().length,
        newConnectionsAfterSignal: traffic.afterSignal,
        resetAfterSignal: reset.length,
        exitMs: Math.round(exitMs),
      })}`,
    );
    expect(code).toBe(0);
    expect(exitMs).toBeLessThan(BOUND_SECONDS * 1000);

    // 'exit' can come before the last lines are read from the pipe.
    await waitForOutput(server, /"role":"primary".*"msg":"Stopped/, 5_000);
    const log = lines(server);
    const drained = log.filter((l) => l.msg === 'Drained: every request received was answered');
    expect(drained.map((l) => l.worker).sort()).toEqual([2, 3]);
    // Both workers had requests in progress at the signal and answered them.
    for (const line of drained) expect(line.requestsAnswered).toBeGreaterThan(0);
    expect(
      log
        .filter((l) => l.msg === 'Stopped' && l.worker !== undefined)
        .map((l) => l.worker)
        .sort(),
    ).toEqual([2, 3]);
    expect(log.filter((l) => l.role === 'primary' && /^Worker \d stopped \(exit code 0\)$/.test(l.msg))).toHaveLength(2);
    expect(log.at(-1)).toMatchObject({ role: 'primary', msg: 'Stopped: every worker drained', exitCode: 0 });

    const acknowledged = traffic.acknowledgedWrites();
    const written = await db.query<{ slug: string }>('SELECT slug FROM organizers WHERE slug = ANY($1)', [acknowledged]);
    expect(written).toHaveLength(acknowledged.length);
    expect(written.length).toBeGreaterThanOrEqual(8);
  });
});

describe('WORKERS=2 with METRICS_PORT', () => {
  let db: ScratchDatabase;
  let server: ServerProcess;

  beforeAll(async () => {
    db = await scratchDatabase();
  });
  afterAll(async () => {
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    await db?.drop();
  });

  it('serves the sum of both workers on the metrics port too (503 while a worker cannot answer), and nothing on the main one', async () => {
    const [port, metricsPort] = [await freePort(), await freePort()];
    const url = `http://127.0.0.1:${port}`;
    server = startServer({
      DATABASE_URL: db.url,
      SECRET_KEY: FLEET_SECRET_KEY,
      WORKERS: '2',
      HOST: '127.0.0.1',
      PORT: String(port),
      METRICS_PORT: String(metricsPort),
      LOG_LEVEL: 'info',
    });
    await waitForOutput(server, /"msg":"Started 2 workers/, 120_000);
    for (let i = 0; i < 10; i++) expect((await getOnNewConnection(`${url}/healthz`)).status).toBe(200);
    expect((await getOnNewConnection(`${url}/metrics`)).status).toBe(404);
    const served = lines(server).filter((l) => l.msg === 'incoming request' && l.req?.url === '/healthz');
    expect(new Set(served.map((l) => l.worker))).toEqual(new Set([1, 2]));

    for (let i = 0; i < 4; i++) {
      const res = await getOnNewConnection(`http://127.0.0.1:${metricsPort}/metrics`);
      expect(res.status).toBe(200);
      const samples = parseMetrics(res.body);
      expect(valueOf(samples, 'agora_http_requests_total', { method: 'GET', route: '/healthz', status: '200' })).toBe(10);
      expect(
        samples
          .filter((s) => s.name === 'process_cpu_seconds_total')
          .map((s) => s.labels.worker)
          .sort(),
      ).toEqual(['1', '2']);
    }

    // A worker that cannot answer: 503 on the metrics port as on the main one.
    const started = lines(server).find((l) => String(l.msg).startsWith('Started 2 workers'))!;
    const stoppedPid = (started.workers as { worker: number; pid: number }[]).find((w) => w.worker === 1)!.pid;
    await expectScrapeUnavailableWhileStopped(server, stoppedPid, `http://127.0.0.1:${metricsPort}/metrics`);

    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
  });
});

describe('WORKERS=2 whose workers cannot start', () => {
  let db: ScratchDatabase;
  let blocker: Server;

  beforeAll(async () => {
    db = await scratchDatabase();
  });
  afterAll(async () => {
    blocker?.close();
    await db?.drop();
  });

  it('replaces them after a growing delay, then gives up with exit 1 and says why', async () => {
    // The port is taken: each worker fails to listen and exits 1 within seconds of its start.
    blocker = createServer();
    const port = await new Promise<number>((resolve) =>
      blocker.listen(0, '127.0.0.1', () => resolve((blocker.address() as { port: number }).port)),
    );
    const server = startServer({
      DATABASE_URL: db.url,
      SECRET_KEY: FLEET_SECRET_KEY,
      WORKERS: '2',
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'info',
    });
    const code = await server.exited;
    expect(code).toBe(1);
    await waitForOutput(server, /"role":"primary".*"msg":"Stopped/, 5_000);

    const primary = lines(server).filter((l) => l.role === 'primary');
    const replaced = primary.filter((l) => String(l.msg).includes('exited unexpectedly (exit code 1); starting a replacement in'));
    expect(replaced.map((l) => l.restartInMs)).toEqual([500, 1000, 2000, 4000]);
    expect(primary.filter((l) => l.level === 60)).toEqual([
      expect.objectContaining({
        quickExits: 5,
        msg: expect.stringMatching(
          /^Workers keep exiting within 10 s of starting \(5 in a row, the last: worker 5, exit code 1\); giving up/,
        ),
      }),
    ]);
    expect(primary.at(-1)).toMatchObject({ msg: 'Stopped', exitCode: 1 });
    expect(lines(server).filter((l) => String(l.msg).startsWith('Started'))).toEqual([]);
    expect(server.output()).toMatch(/EADDRINUSE/);
  });
});
