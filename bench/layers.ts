// The viewer's per-layer CPU budget (issue 29): `{ viewer { id name } }` with a Private-Token, answered
// from a constant by bench/layers-server.ts with Agora's per-request layers switched on one at a time
// (each row adds one to the row above), then by Agora itself; server CPU µs per request for each.
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { freePort, load, LoadResult, startProcess, stopProcess } from './harness.js';
import { LAYERS, LAYERS_TOKEN } from './layers-list.js';

const root = resolve(import.meta.dirname, '..', '..');
const VIEWER = JSON.stringify({ query: '{ viewer { id name } }' });

export interface LayersOptions {
  connections: number;
  seconds: number;
  warmupSeconds: number;
  /** Environment for the layered servers: the production extras as the viewer section runs Agora (rate limits, metrics). */
  env: Record<string, string>;
  /** Measures Agora itself on the same request (the viewer section's server); undefined to leave the row out. */
  agora?: (measure: (name: string, url: string, token: string, pid: number) => Promise<LoadResult>) => Promise<LoadResult>;
}

/** One server's CPU time per request on the viewer query, after a warm-up. */
async function measureServer(name: string, url: string, token: string, pid: number, options: LayersOptions): Promise<LoadResult> {
  const request = {
    url,
    headers: { 'content-type': 'application/json', 'private-token': token },
    body: VIEWER,
    connections: options.connections,
    pid,
  };
  await load(`${name} (warm-up)`, { ...request, seconds: options.warmupSeconds });
  const result = await load(name, { ...request, seconds: options.seconds });
  if (result.errors + result.non2xx > 0) throw new Error(`${name}: ${result.errors + result.non2xx} errors`);
  console.error(`layers: ${name}: ${result.cpuUsPerRequest} µs CPU/request, ${result.requestsPerSecond} req/s`);
  return result;
}

/** The bench section: the table "layer | server CPU µs/request | added by this layer". */
export async function layersBenchmark(options: LayersOptions): Promise<string> {
  const env = { LOG_LEVEL: 'warn', NODE_ENV: 'production', SECRET_KEY: randomBytes(32).toString('base64url'), ...options.env };
  const bare = await withServer([join(root, 'dist/bench/bare-apollo.js')], { NODE_ENV: 'production' }, (url, pid) =>
    measureServer('bare @apollo/server', `${url}/`, LAYERS_TOKEN, pid, options),
  );
  const rows: { layer: string; result: LoadResult }[] = [];
  for (let count = 1; count <= LAYERS.length; count++) {
    const result = await withServer(
      [join(root, 'dist/bench/layers-server.js')],
      env,
      (url, pid) => measureServer(`${count} layers`, `${url}/graphql`, LAYERS_TOKEN, pid, options),
      count,
    );
    rows.push({ layer: LAYERS[count - 1]!, result });
  }
  const agora = options.agora ? await options.agora((name, url, token, pid) => measureServer(name, url, token, pid, options)) : undefined;

  const us = (r: LoadResult) => r.cpuUsPerRequest ?? 0;
  const lines = rows.map(({ layer, result }, i) => {
    const added = i === 0 ? '' : signed(us(result) - us(rows[i - 1]!.result));
    return `| ${i === 0 ? '' : '+ '}${layer} | ${us(result)} | ${added} |`;
  });
  const last = rows.at(-1)!.result;
  return [
    '### The viewer, layer by layer',
    '',
    'Authenticated `{ viewer { id name } }` (a Private-Token) against servers that answer from a constant with',
    "Agora's per-request layers switched on one at a time (bench/layers-server.ts installs each with the",
    "application's own code; every row adds its layer to the row above), then against Agora itself on PostgreSQL.",
    `Rate limits and metrics as the viewer section runs them. autocannon, ${options.connections} connections, ${options.seconds} s`,
    `after a ${options.warmupSeconds} s warm-up, each server in its own process. Differences of a few µs are within`,
    'this host’s noise.',
    '',
    '| layer | server CPU µs/request | added by this layer |',
    '|---|---|---|',
    `| for reference: bare \`@apollo/server\` (standalone, from a constant) | ${us(bare)} | |`,
    ...lines,
    ...(agora
      ? [
          `| Agora itself: Nest's router and controller, its three global guards and exception filters, the real schema and resolver, PostgreSQL | ${us(agora)} | ${signed(us(agora) - us(last))} |`,
        ]
      : []),
  ].join('\n');
}

function signed(value: number): string {
  return value >= 0 ? `+${value}` : `${value}`;
}

async function withServer<T>(
  script: string[],
  env: Record<string, string>,
  fn: (url: string, pid: number) => Promise<T>,
  count?: number,
): Promise<T> {
  const port = await freePort();
  const args = count === undefined ? [String(port)] : [String(port), String(count)];
  const server = await startProcess('node', [...script, ...args], env, `http://127.0.0.1:${port}/healthz`);
  try {
    return await fn(`http://127.0.0.1:${port}`, server.pid!);
  } finally {
    await stopProcess(server);
  }
}
