import cluster, { Worker } from 'node:cluster';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/config.schema.js';
import { openDatabaseTarget } from '../database/database-target.js';
import { DatabaseSettingError, pendingMigrationsWarning, prepareDatabase } from '../database/prepare-database.js';
import type { PrimaryService } from './primary-service.js';
import { primaryServices } from './primary-services.js';
import { DEFAULT_RESTART_POLICY, RestartPolicy } from './restart-policy.js';

/**
 * The process `node dist/src/main.js` becomes with WORKERS > 1 (docs/operations.md, "All cores of one
 * machine"): it serves nothing itself. It applies the migrations once, starts the primary services,
 * forks the workers (each runs main.ts as a single server does, sharing the port through node:cluster),
 * replaces a worker that dies, and on SIGTERM/SIGINT passes the signal on, waits for every worker to
 * drain, and exits 0, or 1 if a worker had to cut requests or did not stop within the bound.
 */
export async function runPrimary(config: AppConfig, logger: Logger): Promise<void> {
  const log = logger.child({ role: 'primary', pid: process.pid });
  // Once, here, rather than in each worker: the workers then find nothing to apply (they would wait for
  // one another on the migration lock otherwise, which is also correct, only slower).
  const target = await openDatabaseTarget(config);
  try {
    const { applied, pending, warnings } = await prepareDatabase(config, target, { migrate: config.database.migrationsRun });
    log.info({ database: target.description, migrationsApplied: applied }, 'Database ready');
    for (const warning of warnings) log.warn(warning);
    if (pending > 0) log.warn(pendingMigrationsWarning(pending));
  } catch (err) {
    if (err instanceof DatabaseSettingError) log.fatal(`Cannot start: ${err.message}`);
    else log.fatal({ err }, `Cannot start: ${(err as Error).message}`);
    await target.close();
    process.exit(1);
  }
  await target.close();

  const services = primaryServices(config);
  for (const service of services) {
    try {
      await service.start();
    } catch (err) {
      log.fatal({ err }, `Cannot start: the primary service "${service.name}" failed: ${(err as Error).message}`);
      process.exit(1);
    }
  }
  new Supervisor(config, log, services).start();
}

interface Running {
  worker: Worker;
  forkedAt: number;
  listening: boolean;
  /** Tells the restart policy the worker has lived long enough to count as started. */
  stableTimer: NodeJS.Timeout;
  /** The worker this one replaces. */
  replaces?: number;
}

interface Stopping {
  /** The signal passed on to the workers. */
  signal: NodeJS.Signals;
  startedAt: number;
  /** Exit 0: every worker drained and exited 0. */
  clean: boolean;
}

class Supervisor {
  private readonly running = new Map<number, Running>();
  private readonly policy = new RestartPolicy();
  private readonly replacements = new Set<NodeJS.Timeout>();
  private stopping: Stopping | undefined;
  private startedLogged = false;

  constructor(
    private readonly config: AppConfig,
    private readonly log: Logger,
    private readonly services: PrimaryService[],
  ) {}

  start(): void {
    cluster.on('listening', (worker) => this.listening(worker));
    cluster.on('exit', (worker, code, signal) => this.exited(worker, code, signal as NodeJS.Signals | null));
    process.on('SIGTERM', () => this.stop('SIGTERM'));
    process.on('SIGINT', () => this.stop('SIGINT'));
    for (let i = 0; i < this.config.workers; i++) this.fork();
  }

  private fork(replaces?: number): void {
    const worker = cluster.fork();
    const stableTimer = setTimeout(() => this.policy.stable(), DEFAULT_RESTART_POLICY.quickExitMs);
    this.running.set(worker.id, { worker, forkedAt: performance.now(), listening: false, stableTimer, replaces });
  }

  /** A worker's server is listening (the main port first; METRICS_PORT, if set, after it). */
  private listening(worker: Worker): void {
    const entry = this.running.get(worker.id);
    if (!entry || entry.listening) return;
    entry.listening = true;
    const workers = [...this.running.values()].filter((r) => r.listening);
    if (!this.startedLogged && workers.length === this.config.workers) {
      this.startedLogged = true;
      this.log.info(
        { workers: workers.map((r) => ({ worker: r.worker.id, pid: r.worker.process.pid })), url: this.config.baseUrl },
        `Started ${workers.length} workers; Agora is listening on port ${this.config.port}`,
      );
      if (this.config.rateLimits && !this.config.redisUrl) {
        this.log.warn(
          `Rate limits are counted by each of the ${workers.length} workers on its own: a caller gets up to ${workers.length} budgets. ` +
            'Set REDIS_URL to share the counters (docs/operations.md, "Rate limits").',
        );
      }
    } else if (entry.replaces !== undefined) {
      this.log.info(
        { worker: worker.id, workerPid: worker.process.pid },
        `Worker ${worker.id} is listening, in place of worker ${entry.replaces}`,
      );
    }
  }

  private exited(worker: Worker, code: number | null, signal: NodeJS.Signals | null): void {
    const entry = this.running.get(worker.id);
    if (!entry) return;
    this.running.delete(worker.id);
    clearTimeout(entry.stableTimer);
    const fields = { worker: worker.id, workerPid: worker.process.pid, code, signal };
    const how = signal ? `killed by ${signal}` : `exit code ${code}`;

    if (this.stopping) {
      // A worker still starting when the signal came dies of it, having served nothing.
      const clean = code === 0 || (!entry.listening && signal === this.stopping.signal);
      if (!clean) this.stopping.clean = false;
      if (clean) this.log.info(fields, `Worker ${worker.id} stopped (${how})`);
      else this.log.error(fields, `Worker ${worker.id} stopped (${how}): it did not drain cleanly`);
      if (this.running.size === 0) void this.finish();
      return;
    }

    const livedMs = Math.round(performance.now() - entry.forkedAt);
    const decision = this.policy.exited(livedMs);
    if (decision.action === 'give-up') {
      this.log.fatal(
        { ...fields, livedMs, quickExits: decision.quickExits },
        `Workers keep exiting within ${DEFAULT_RESTART_POLICY.quickExitMs / 1000} s of starting (${decision.quickExits} in a row, ` +
          `the last: worker ${worker.id}, ${how}); giving up: stopping any other worker and exiting 1 (the workers' log lines above say why)`,
      );
      this.stop('SIGTERM', false);
      return;
    }
    const when = decision.delayMs > 0 ? ` in ${decision.delayMs} ms` : '';
    this.log.error(
      { ...fields, livedMs, restartInMs: decision.delayMs },
      `Worker ${worker.id} (pid ${worker.process.pid}) exited unexpectedly (${how}); starting a replacement${when}`,
    );
    const timer = setTimeout(() => {
      this.replacements.delete(timer);
      this.fork(worker.id);
    }, decision.delayMs);
    this.replacements.add(timer);
  }

  /** Passes the signal on: each worker drains on its own (src/shutdown/stop-on-signals.ts) within the bound. */
  private stop(signal: NodeJS.Signals, clean = true): void {
    if (this.stopping) return;
    this.stopping = { signal, startedAt: performance.now(), clean };
    for (const timer of this.replacements) clearTimeout(timer);
    this.replacements.clear();
    if (this.running.size > 0) {
      this.log.info(
        { signal, workers: this.running.size, shutdownTimeoutMs: this.config.shutdownTimeoutMs },
        `Shutting down: ${signal} passed on to ${this.running.size} workers, which drain`,
      );
    }
    for (const { worker } of this.running.values()) worker.process.kill(signal);
    // Each worker exits by this bound on its own; this only covers one that is stuck beyond helping.
    setTimeout(() => {
      this.log.error(
        { workers: [...this.running.keys()] },
        `Workers still running after SHUTDOWN_TIMEOUT_SECONDS (${this.config.shutdownTimeoutMs} ms): killing them; exiting`,
      );
      for (const { worker } of this.running.values()) worker.process.kill('SIGKILL');
      process.exit(1);
    }, this.config.shutdownTimeoutMs).unref();
    if (this.running.size === 0) void this.finish();
  }

  private async finish(): Promise<void> {
    const stopping = this.stopping!;
    for (const service of [...this.services].reverse()) {
      try {
        await service.stop?.();
      } catch (err) {
        this.log.warn({ err }, `Stopping the primary service "${service.name}" failed`);
      }
    }
    const shutdownMs = Math.round(performance.now() - stopping.startedAt);
    const exitCode = stopping.clean ? 0 : 1;
    this.log.info({ shutdownMs, exitCode }, stopping.clean ? 'Stopped: every worker drained' : 'Stopped');
    process.exit(exitCode);
  }
}
