import { ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { TEST_RATE_LIMITS } from './rate-limits.js';

export const ROOT = resolve(import.meta.dirname, '..', '..');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  json: Record<string, any>;
}

/** Environment for a child process: this one's, minus database settings, plus `env`. */
function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const { DATABASE_URL: _url, DATA_DIR: _dir, ...rest } = process.env;
  // Cheap password hashes (argon2id at its least cost): thousands of sign-ins a run (docs/configuration.md).
  return { ...rest, NODE_ENV: 'test', PASSWORD_HASH_COST: 'test', LOG_LEVEL: 'warn', ...TEST_RATE_LIMITS, ...env };
}

/** Runs the built CLI (`npm run cli -- …` without the build step). */
export function runCli(env: Record<string, string>, ...args: string[]): Promise<CliResult> {
  return runCliWithInput(env, undefined, ...args);
}

/** Runs the built CLI with `input` on its standard input. */
export function runCliWithInput(env: Record<string, string>, input: string | undefined, ...args: string[]): Promise<CliResult> {
  return runNode(env, input, resolve(ROOT, 'dist/src/cli/main.js'), ...args);
}

/** Runs the TypeORM CLI (`npx typeorm …`) in the project. */
export function runTypeormCli(env: Record<string, string>, ...args: string[]): Promise<CliResult> {
  // TypeORM colours its output when it thinks a terminal or a CI service reads it (CI=true in .ci/run).
  return runNode({ NO_COLOR: '1', FORCE_COLOR: '0', ...env }, undefined, resolve(ROOT, 'node_modules/typeorm/cli.js'), ...args);
}

/** Starts the built CLI and returns at once: `child` to send signals to, `result` once it has exited. */
export function startCli(env: Record<string, string>, ...args: string[]): { child: ChildProcess; result: Promise<CliResult> } {
  return startNode(env, undefined, resolve(ROOT, 'dist/src/cli/main.js'), ...args);
}

function runNode(env: Record<string, string>, input: string | undefined, script: string, ...args: string[]): Promise<CliResult> {
  return startNode(env, input, script, ...args).result;
}

function startNode(
  env: Record<string, string>,
  input: string | undefined,
  script: string,
  ...args: string[]
): { child: ChildProcess; result: Promise<CliResult> } {
  let child!: ChildProcess;
  const result = new Promise<CliResult>((done) => {
    child = execFile('node', [script, ...args], { env: childEnv(env), timeout: 60_000 }, (error, stdout, stderr) => {
      let json: Record<string, any>;
      try {
        json = JSON.parse(stdout) as Record<string, any>;
      } catch {
        json = {};
      }
      done({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr, json });
    });
    child.stdin?.end(input ?? '');
  });
  return { child, result };
}

export interface ServerProcess {
  child: ChildProcess;
  output: () => string;
  /**
   * The exit code, once the process has exited **and** its output has all been read ('close', not
   * 'exit': at 'exit' the last lines it wrote may still be in the pipe).
   */
  exited: Promise<number | null>;
}

/** Starts the built server (`npm start` without the build step), of this project or of a copy at `root`. */
export function startServer(env: Record<string, string>, root = ROOT): ServerProcess {
  const child = spawn('node', [resolve(root, 'dist/src/main.js')], { cwd: root, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = once(child, 'close').then(([code]) => code as number | null);
  return { child, output: () => output, exited };
}

/**
 * Runs `npm start --ignore-scripts` (the package's start script exactly, without the prestart build:
 * the tests build first) in the project: `child` is npm itself.
 */
export function startWithNpm(env: Record<string, string>): ServerProcess {
  const child = spawn('npm', ['start', '--ignore-scripts'], {
    cwd: ROOT,
    env: { ...childEnv(env), npm_config_update_notifier: 'false' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = once(child, 'close').then(([code]) => code as number | null);
  return { child, output: () => output, exited };
}

/** The direct children of a process, read from /proc (Linux). */
export function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Every process under `pid`: each child, then its own descendants. */
export function descendantsOf(pid: number): number[] {
  return childrenOf(pid).flatMap((child) => [child, ...descendantsOf(child)]);
}

/** The command line of a running process, or undefined once it is gone. */
export function commandLine(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
  } catch {
    return undefined;
  }
}

/** Resolves once the server has written a line matching `pattern`. */
export async function waitForOutput(server: ServerProcess, pattern: RegExp, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pattern.test(server.output())) {
    if (Date.now() > deadline) throw new Error(`no output matching ${pattern}:\n${server.output()}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

export async function waitForHttp(url: string, server: ServerProcess, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (server.child.exitCode !== null) throw new Error(`server exited early:\n${server.output()}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`server did not answer ${url}:\n${server.output()}`);
}

/** The server's exit code once it exits within `ms`; else 'running' (and it is killed, so that a hang fails the test, not the run). */
export async function exitWithin(server: ServerProcess, ms: number): Promise<number | null | 'running'> {
  let timer: NodeJS.Timeout | undefined;
  const running = new Promise<'running'>((resolve) => (timer = setTimeout(() => resolve('running'), ms)));
  const result = await Promise.race([server.exited, running]);
  clearTimeout(timer);
  if (result === 'running') {
    server.child.kill('SIGKILL');
    await server.exited;
  }
  return result;
}

/** Polls `probe` every 100 ms until it returns true or `limitMs` passes; returns whether it did. */
export async function eventually(probe: () => Promise<boolean>, limitMs: number): Promise<boolean> {
  const deadline = Date.now() + limitMs;
  while (Date.now() < deadline) {
    if (await probe()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}
