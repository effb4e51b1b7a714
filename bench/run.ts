// `npm run bench`: measures this machine in one run and rewrites the results section of
// docs/benchmarks.md. Only ratios between rows of one run mean anything on a shared machine.
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort, load, LoadResult, startProcess, stopProcess } from './harness.js';

const root = resolve(import.meta.dirname, '..', '..');
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const WARMUP_SECONDS = 3;
const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
// Extra node flags for the measured server only, e.g. BENCH_SERVER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof".
const SERVER_NODE_ARGS = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
const VIEWER = JSON.stringify({ query: '{ viewer { id name } }' });

function cli(env: Record<string, string>, ...args: string[]): Record<string, unknown> {
  const out = execFileSync('node', [join(root, 'dist/src/cli/main.js'), ...args], { env: { ...process.env, ...env }, encoding: 'utf8' });
  return JSON.parse(out) as Record<string, unknown>;
}

async function measure(name: string, url: string, headers: Record<string, string>): Promise<LoadResult> {
  const options = { url, headers: { 'content-type': 'application/json', ...headers }, body: VIEWER, connections: CONNECTIONS };
  await load(`${name} (warm-up)`, { ...options, seconds: WARMUP_SECONDS });
  const result = await load(name, { ...options, seconds: SECONDS });
  console.error(`${name}: ${result.requestsPerSecond} req/s, p99 ${result.p99Ms} ms, ${result.errors} errors, ${result.non2xx} non-2xx`);
  return result;
}

async function viewerBenchmark(): Promise<string> {
  const barePort = await freePort();
  const bare = await startProcess('node', [join(root, 'dist/bench/bare-apollo.js'), String(barePort)], {}, `http://127.0.0.1:${barePort}/`);
  let bareResult: LoadResult;
  try {
    bareResult = await measure('bare @apollo/server, constant', `http://127.0.0.1:${barePort}/`, {});
  } finally {
    await stopProcess(bare);
  }

  const agoraResult = await withAgora(async ({ env, url }) => {
    const token = cli(env, 'tokens:create', '--user', 'bench', '--name', 'bench', '--scopes', 'read_api').token as string;
    return measure('Agora, Private-Token, PostgreSQL', `${url}/graphql`, { 'private-token': token });
  });

  const ratio = agoraResult.requestsPerSecond / bareResult.requestsPerSecond;
  const row = (r: LoadResult) => `| ${r.name} | ${r.requestsPerSecond} | ${r.p50Ms} | ${r.p99Ms} | ${r.errors + r.non2xx} |`;
  return [
    '### Authenticated `{ viewer { id name } }`',
    '',
    `autocannon, ${CONNECTIONS} connections, ${SECONDS} s after a ${WARMUP_SECONDS} s warm-up, each server in its own process.`,
    '',
    '| server | req/s | p50 ms | p99 ms | errors |',
    '|---|---|---|---|---|',
    row(bareResult),
    row(agoraResult),
    '',
    `**Ratio: ${ratio.toFixed(2)}×** the bare server (target ≥ 0.70×, zero errors): ${ratio >= 0.7 && agoraResult.errors + agoraResult.non2xx === 0 ? 'met' : 'NOT met'}.`,
  ].join('\n');
}

/** Complete authorization-code exchanges per second, against the RS256 signing-only rate of this machine. */
async function tokenBenchmark(): Promise<string> {
  const signOnly = JSON.parse(execFileSync('node', [join(root, 'dist/bench/sign-only.js'), '5'], { encoding: 'utf8' })) as {
    signaturesPerSecond: number;
  };
  console.error(`RS256 signing only: ${signOnly.signaturesPerSecond}/s`);

  return withAgora(async ({ env, url }) => {
    const app = cli(
      env,
      'apps:create',
      '--owner',
      'bench',
      '--name',
      'Bench',
      '--redirect-uri',
      'http://localhost:4000/cb',
      '--scopes',
      'openid profile api',
    );
    const verifier = randomBytes(32).toString('base64url');
    const codes = await insertCodes(env.DATABASE_URL, app.clientId as string, verifier, 60_000);
    let next = 0;
    const form = (code: string) =>
      new URLSearchParams({
        grant_type: 'authorization_code',
        client_id: app.clientId as string,
        client_secret: app.clientSecret as string,
        redirect_uri: 'http://localhost:4000/cb',
        code,
        code_verifier: verifier,
      }).toString();
    const options = {
      url: `${url}/oauth/token`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      connections: 20,
      setupRequest: (request: { body?: string }) => ({ ...request, body: form(codes[next++ % codes.length]!) }),
    };
    await load('token endpoint (warm-up)', { ...options, seconds: WARMUP_SECONDS });
    const result = await load('token endpoint', { ...options, seconds: SECONDS });
    if (next > codes.length) throw new Error('ran out of authorization codes: raise the count');
    console.error(
      `token endpoint: ${result.requestsPerSecond} exchanges/s, p99 ${result.p99Ms} ms, ${result.errors + result.non2xx} errors`,
    );
    const ratio = result.requestsPerSecond / signOnly.signaturesPerSecond;
    return [
      '### Token endpoint: complete code exchanges',
      '',
      'Each request redeems a fresh authorization code (client authentication, PKCE, code consumed, access token',
      'stored, RS256 id_token signed). autocannon, 20 connections. The floor is the rate at which one Node thread',
      'of this machine signs RS256 id_tokens and does nothing else.',
      '',
      '| measure | per second | p99 ms | errors |',
      '|---|---|---|---|',
      `| RS256 signing only (one thread) | ${signOnly.signaturesPerSecond} | | |`,
      `| token endpoint, PostgreSQL | ${result.requestsPerSecond} | ${result.p99Ms} | ${result.errors + result.non2xx} |`,
      '',
      `**Ratio: ${ratio.toFixed(2)}×** the signing-only rate (target ≥ 0.50×): ${ratio >= 0.5 && result.errors + result.non2xx === 0 ? 'met' : 'NOT met'}.`,
    ].join('\n');
  });
}

/** A migrated database of its own with a user `bench`, and Agora serving it in its own process. */
async function withAgora<T>(fn: (ctx: { env: Record<string, string>; url: string }) => Promise<T>): Promise<T> {
  const database = `agora_bench_${process.pid}_${Date.now().toString(36)}`;
  execFileSync('psql', [DATABASE_URL, '-qc', `CREATE DATABASE ${database}`]);
  const dbUrl = new URL(DATABASE_URL);
  dbUrl.pathname = `/${database}`;
  const env = {
    DATABASE_URL: dbUrl.toString(),
    LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
    SECRET_KEY: randomBytes(32).toString('base64url'),
  };
  const port = await freePort();
  try {
    cli(env, 'migration:run');
    cli(
      env,
      'users:create',
      '--username',
      'bench',
      '--email',
      'bench@example.com',
      '--name',
      'Bench User',
      '--password',
      'load-test-secret-42',
    );
    const server = await startProcess(
      'node',
      [...SERVER_NODE_ARGS, join(root, 'dist/src/main.js')],
      { ...env, PORT: String(port), HOST: '127.0.0.1' },
      `http://127.0.0.1:${port}/healthz`,
    );
    try {
      return await fn({ env, url: `http://127.0.0.1:${port}` });
    } finally {
      await stopProcess(server);
    }
  } finally {
    execFileSync('psql', [DATABASE_URL, '-qc', `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`]);
  }
}

/** Authorization codes as consent would leave them, inserted in bulk. */
async function insertCodes(databaseUrl: string, clientId: string, verifier: string, count: number): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string; owner_id: string }>(
      'SELECT id, owner_id FROM oauth_applications WHERE client_id = $1',
      [clientId],
    );
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const codes = Array.from({ length: count }, () => randomBytes(32).toString('base64url'));
    const hashes = codes.map((c) => createHash('sha256').update(c).digest('hex'));
    await client.query(
      `INSERT INTO oauth_authorization_codes (code_hash, application_id, user_id, redirect_uri, scopes, nonce, code_challenge, auth_time, expires_at)
       SELECT h, $2, $3, 'http://localhost:4000/cb', ARRAY['openid','profile','api'], 'n', $4, now(), now() + interval '1 hour' FROM unnest($1::text[]) AS h`,
      [hashes, rows[0]!.id, rows[0]!.owner_id, challenge],
    );
    return codes;
  } finally {
    await client.end();
  }
}

async function main(): Promise<void> {
  const only = process.env.BENCH_ONLY;
  const sections = [];
  if (!only || only === 'viewer') sections.push(await viewerBenchmark());
  if (!only || only === 'token') sections.push(await tokenBenchmark());
  const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, Node ${process.version}`;
  const results = [
    `<!-- results:start -->`,
    `Last run: ${new Date().toISOString()} on ${machine}.`,
    '',
    ...sections,
    `<!-- results:end -->`,
  ].join('\n');
  const docPath = join(root, 'docs/benchmarks.md');
  const doc = readFileSync(docPath, 'utf8');
  writeFileSync(docPath, doc.replace(/<!-- results:start -->[\s\S]*<!-- results:end -->/, results));
  console.log(results);
}

const scratch = mkdtempSync(join(tmpdir(), 'agora-bench-'));
main()
  .catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => rmSync(scratch, { recursive: true, force: true }));
