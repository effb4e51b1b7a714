import { execSync } from 'node:child_process';
import { freePort } from '../support/test-app.js';
import { runCli, startServer, waitForHttp, ServerProcess } from '../support/processes.js';

/**
 * The fault tier: the real server process under load while the PostgreSQL server it uses is stopped
 * and started again. `.ci/run` gives it a throwaway cluster of its own:
 *   FAULT_DATABASE_URL   the cluster's database
 *   FAULT_PG_STOP        a shell command that stops the cluster (`pg_ctl stop -m fast`)
 *   FAULT_PG_START       a shell command that starts it again
 */
const { FAULT_DATABASE_URL: url, FAULT_PG_STOP: stopCommand, FAULT_PG_START: startCommand } = process.env;
const configured = url && stopCommand && startCommand;

const OUTAGE_MS = 6_000;
const WORKERS = 12;

interface Probe {
  name: string;
  /** Whether the answer can come from memory: it must stay 200 while the database is down. */
  fromMemory?: boolean;
  request: (base: string, token: string) => Promise<Response>;
}

const PROBES: Probe[] = [
  {
    name: 'graphql anonymous',
    request: (base) =>
      fetch(`${base}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ events(first: 5) { nodes { id title } } }' }),
      }),
  },
  {
    name: 'graphql with a token',
    request: (base, token) =>
      fetch(`${base}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'private-token': token },
        body: JSON.stringify({ query: '{ viewer { id name } }' }),
      }),
  },
  { name: 'rest', request: (base) => fetch(`${base}/api/events`) },
  {
    name: 'oauth token',
    request: (base) =>
      fetch(`${base}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body:
          'grant_type=authorization_code&code=x&redirect_uri=http%3A%2F%2Flocalhost%2Fcb&client_id=nobody&client_secret=x&code_verifier=' +
          'a'.repeat(43),
      }),
  },
  {
    name: 'authorize page',
    request: (base) =>
      fetch(`${base}/oauth/authorize?response_type=code&client_id=nobody&redirect_uri=http%3A%2F%2Flocalhost%2Fcb`, {
        headers: { accept: 'text/html' },
      }),
  },
  {
    name: 'healthz with a token',
    fromMemory: true,
    request: (base, token) => fetch(`${base}/healthz`, { headers: { 'private-token': token } }),
  },
  { name: 'jwks', fromMemory: true, request: (base) => fetch(`${base}/oauth/discovery/keys`) },
  { name: 'discovery', fromMemory: true, request: (base) => fetch(`${base}/.well-known/openid-configuration`) },
];

interface Outcome {
  probe: Probe;
  phase: 'before' | 'outage' | 'after';
  status: number | 'network error';
  retryAfter: string | null;
  body: string;
}

(configured ? describe : describe.skip)('PostgreSQL stopped under load', () => {
  let server: ServerProcess;
  let base: string;
  let token: string;

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const env = { DATABASE_URL: url!, SECRET_KEY: 'fault-tier-secret-key-0123456789abcdef', DATABASE_CONNECT_TIMEOUT_SECONDS: '2' };
    expect((await runCli(env, 'migration:run')).code).toBe(0);
    const suffix = Date.now().toString(36);
    expect(
      (
        await runCli(
          env,
          'users:create',
          '--username',
          `fault-${suffix}`,
          '--email',
          `fault-${suffix}@example.com`,
          '--name',
          'Fault',
          '--password',
          'a-long-enough-password',
        )
      ).code,
    ).toBe(0);
    const created = await runCli(env, 'tokens:create', '--user', `fault-${suffix}`, '--name', 'fault tier');
    token = created.json.token as string;
    expect(token).toMatch(/^agora_pat_/);
    server = startServer({ ...env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', BASE_URL: base });
    await waitForHttp(`${base}/readyz`, server);
  }, 120_000);

  afterAll(async () => {
    server?.child.kill('SIGTERM');
    await server?.exited;
    try {
      execSync(startCommand!, { stdio: 'ignore' }); // in case the test stopped before starting it again
    } catch {
      // already running
    }
  });

  it('answers 503 with Retry-After (never 500, never a dropped connection) while it is down, serves what it can from memory, and recovers', async () => {
    const outcomes: Outcome[] = [];
    let phase: Outcome['phase'] = 'before';
    let running = true;
    const worker = async (offset: number) => {
      for (let i = offset; running; i++) {
        const probe = PROBES[i % PROBES.length]!;
        const at = phase;
        try {
          const res = await probe.request(base, token);
          outcomes.push({ probe, phase: at, status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.text() });
        } catch {
          outcomes.push({ probe, phase: at, status: 'network error', retryAfter: null, body: '' });
        }
      }
    };
    const workers = Array.from({ length: WORKERS }, (_, i) => worker(i));

    await new Promise((r) => setTimeout(r, 1_500));
    phase = 'outage';
    execSync(stopCommand!, { stdio: 'ignore' });
    const readyDuring: number[] = [];
    const outageEnds = Date.now() + OUTAGE_MS;
    while (Date.now() < outageEnds) {
      readyDuring.push((await fetch(`${base}/readyz`)).status);
      await new Promise((r) => setTimeout(r, 250));
    }
    execSync(startCommand!, { stdio: 'ignore' });
    const restarted = Date.now();
    let recoveredAfterMs = -1;
    while (Date.now() - restarted < 20_000) {
      const ok = (await fetch(`${base}/readyz`)).status === 200 && (await PROBES[1]!.request(base, token)).status === 200;
      if (ok) {
        recoveredAfterMs = Date.now() - restarted;
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    phase = 'after';
    await new Promise((r) => setTimeout(r, 1_500));
    running = false;
    await Promise.all(workers);

    const count = (f: (o: Outcome) => boolean) => outcomes.filter(f).length;
    const byStatus: Record<string, number> = {};
    for (const o of outcomes) byStatus[`${o.phase} ${o.status}`] = (byStatus[`${o.phase} ${o.status}`] ?? 0) + 1;
    console.log(`fault tier: ${outcomes.length} requests, recovered ${recoveredAfterMs} ms after restart`, byStatus);

    expect(count((o) => o.status === 'network error')).toBe(0);
    expect(
      outcomes.filter((o) => typeof o.status === 'number' && o.status >= 500 && o.status !== 503).map((o) => `${o.probe.name} ${o.status}`),
    ).toEqual([]);
    const unavailable = outcomes.filter((o) => o.status === 503);
    expect(unavailable.length).toBeGreaterThan(50);
    expect(unavailable.filter((o) => o.retryAfter !== '5').map((o) => o.probe.name)).toEqual([]);
    expect(count((o) => o.phase === 'outage' && !!o.probe.fromMemory && o.status !== 200)).toBe(0);
    for (const o of unavailable) {
      if (o.probe.name === 'oauth token') expect(JSON.parse(o.body)).toMatchObject({ error: 'temporarily_unavailable' });
      if (o.probe.name.startsWith('graphql')) expect(JSON.parse(o.body).errors[0].extensions.code).toBe('SERVICE_UNAVAILABLE');
      if (o.probe.name === 'rest') expect(JSON.parse(o.body)).toEqual({ message: '503 Service Unavailable' });
      if (o.probe.name === 'authorize page') expect(o.body).toContain('Temporarily unavailable');
    }
    expect(readyDuring.slice(2).every((s) => s === 503)).toBe(true);
    expect(recoveredAfterMs).toBeGreaterThanOrEqual(0);
    // After recovery every request gets its normal answer (the token and authorize probes name an unknown client: 4xx).
    expect(count((o) => o.phase === 'after' && (o.status === 'network error' || o.status >= 500))).toBe(0);

    const logs = server
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { level: number; msg: string });
    expect(logs.filter((l) => l.level >= 50).map((l) => l.msg)).toEqual([]);
    // Once per 10 s with a count, not once per request.
    expect(logs.filter((l) => l.msg.startsWith('Database unavailable')).length).toBeLessThanOrEqual(4);
  }, 120_000);
});
