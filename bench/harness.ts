import autocannon from 'autocannon';
import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

export interface LoadResult {
  name: string;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  non2xx: number;
  total: number;
  /** CPU time (user + system) the server process spent per request, in µs, when its pid was given. */
  cpuUsPerRequest?: number;
  /** How busy the whole machine was during the run, in % of all its CPUs (server, database, load generator, anything else). */
  machineBusyPercent?: number;
  /** CPU the load generator (autocannon, in this process) used, in % of one CPU. */
  generatorCpuPercent: number;
}

/**
 * CPU time (user + system) a process and its descendants (the workers of a node:cluster primary) have
 * used so far, in µs, from /proc (Linux); undefined once the process is gone.
 */
export function processCpuMicros(pid: number): number | undefined {
  const own = ownCpuMicros(pid);
  if (own === undefined) return undefined;
  return descendantsOf(pid).reduce((sum, child) => sum + (ownCpuMicros(child) ?? 0), own);
}

/** The processes under `pid`, children first, from /proc (Linux). */
export function descendantsOf(pid: number): number[] {
  let children: number[];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
  return children.flatMap((child) => [child, ...descendantsOf(child)]);
}

/** Busy and total time of all the machine's CPUs so far, in clock ticks, from /proc/stat (Linux). */
function machineTicks(): { busy: number; total: number } | undefined {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
    const total = fields.reduce((a, b) => a + b, 0);
    const idle = fields[3]! + fields[4]!; // idle, iowait
    return { busy: total - idle, total };
  } catch {
    return undefined;
  }
}

/** CPU time (user + system) of one process (all its threads), without its children, in µs. */
export function ownCpuMicros(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime: in clock ticks (100 per second on Linux)
    return Number.isFinite(ticks) ? ticks * 10_000 : undefined;
  } catch {
    return undefined;
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Starts a process and waits until `url` answers. */
export async function startProcess(command: string, args: string[], env: Record<string, string>, readyUrl: string): Promise<ChildProcess> {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited: ${stderr}`);
    try {
      await fetch(readyUrl);
      return child;
    } catch {
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  child.kill('SIGKILL');
  throw new Error(`${args.join(' ')} did not start: ${stderr}`);
}

export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  await Promise.race([once(child, 'exit'), new Promise((r) => setTimeout(r, 10_000))]);
  if (child.exitCode === null) child.kill('SIGKILL');
}

export async function load(
  name: string,
  options: {
    url: string;
    method?: 'GET' | 'POST';
    headers?: Record<string, string>;
    body?: string;
    connections: number;
    seconds: number;
    /** Changes each request (autocannon's setupRequest), e.g. to send a fresh authorization code. */
    setupRequest?: (request: { body?: string }) => { body?: string };
    /** The server's process, whose CPU time per request is reported: unlike requests per second, it
     * hardly depends on what else the machine runs. */
    pid?: number;
  },
): Promise<LoadResult> {
  const cpuBefore = options.pid === undefined ? undefined : processCpuMicros(options.pid);
  const machineBefore = machineTicks();
  const generatorBefore = process.cpuUsage();
  const startedAt = performance.now();
  const result = await autocannon({
    url: options.url,
    method: options.method ?? 'POST',
    headers: options.headers,
    body: options.body,
    connections: options.connections,
    duration: options.seconds,
    ...(options.setupRequest ? { requests: [{ setupRequest: options.setupRequest as never }] } : {}),
  });
  const cpuAfter = options.pid === undefined ? undefined : processCpuMicros(options.pid);
  const machineAfter = machineTicks();
  const generator = process.cpuUsage(generatorBefore);
  const elapsedUs = (performance.now() - startedAt) * 1000;
  return {
    machineBusyPercent:
      machineBefore && machineAfter && machineAfter.total > machineBefore.total
        ? Math.round((100 * (machineAfter.busy - machineBefore.busy)) / (machineAfter.total - machineBefore.total))
        : undefined,
    generatorCpuPercent: Math.round((100 * (generator.user + generator.system)) / elapsedUs),
    cpuUsPerRequest:
      cpuBefore !== undefined && cpuAfter !== undefined && result.requests.total > 0
        ? Math.round((cpuAfter - cpuBefore) / result.requests.total)
        : undefined,
    name,
    requestsPerSecond: Math.round(result.requests.average),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    total: result.requests.total,
  };
}
