import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A Redis server of the test's own on `port` (`redis-server` on PATH, or REDIS_SERVER; .ci/run installs it
 * when missing), without persistence, which the test may stop and start again.
 */
export class RedisServer {
  private child?: ChildProcess;
  private readonly dir = mkdtempSync(join(tmpdir(), 'agora-fleet-redis-'));
  constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}/0`;
  }

  async start(): Promise<void> {
    const binary = process.env.REDIS_SERVER || 'redis-server';
    const child = spawn(
      binary,
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--enable-debug-command',
        'local',
        '--dir',
        this.dir,
      ],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    this.child = child;
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await new Promise<void>((resolve, reject) => {
      child.once('error', (err) => reject(new Error(`Cannot run ${binary} (install redis-server, or set REDIS_SERVER): ${err.message}`)));
      child.once('exit', (code) => reject(new Error(`${binary} exited ${code}: ${output}`)));
      const poll = setInterval(() => {
        if (/Ready to accept connections/.test(output)) {
          clearInterval(poll);
          resolve();
        }
      }, 50);
    });
  }

  async kill(): Promise<void> {
    if (!this.child || this.child.exitCode !== null) return;
    const exited = once(this.child, 'exit');
    this.child.kill('SIGKILL');
    await exited;
  }

  async close(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
