// `npm run bench`: measures this machine in one run and rewrites the results section of
// docs/benchmarks.md. Only ratios between rows of one run mean anything on a shared machine.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort, load, LoadResult, startProcess, stopProcess } from './harness.js';

const root = resolve(import.meta.dirname, '..', '..');
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const WARMUP_SECONDS = 3;
const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
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

  const database = `agora_bench_${process.pid}`;
  const adminUrl = DATABASE_URL;
  execFileSync('psql', [adminUrl, '-qc', `CREATE DATABASE ${database}`]);
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  const env = { DATABASE_URL: url.toString(), LOG_LEVEL: 'warn', NODE_ENV: 'production' };
  const port = await freePort();
  let agoraResult: LoadResult;
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
    const token = cli(env, 'tokens:create', '--user', 'bench', '--name', 'bench', '--scopes', 'read_api').token as string;
    const server = await startProcess(
      'node',
      [join(root, 'dist/src/main.js')],
      { ...env, PORT: String(port), HOST: '127.0.0.1' },
      `http://127.0.0.1:${port}/healthz`,
    );
    try {
      agoraResult = await measure('Agora, Private-Token, PostgreSQL', `http://127.0.0.1:${port}/graphql`, { 'private-token': token });
    } finally {
      await stopProcess(server);
    }
  } finally {
    execFileSync('psql', [adminUrl, '-qc', `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`]);
  }

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

async function main(): Promise<void> {
  const sections = [await viewerBenchmark()];
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
