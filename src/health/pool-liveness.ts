import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import type { DatabaseTarget } from '../database/database-target.js';
import { DATABASE_TARGET } from '../database/database-tokens.js';
import { OwnedPool } from '../database/owned-pool.js';
import { LIVENESS_CHECK_INTERVAL_MS as CHECK_INTERVAL_MS, LIVENESS_PROBE_TIMEOUT_MS as PROBE_TIMEOUT_MS } from './probe-bounds.js';

export type Liveness = { live: true } | { live: false; stalledMs: number };

/**
 * Whether the process can still reach a working state by itself, for the liveness probe. A database
 * outage is not a reason to restart (readiness takes the instance out of the load balancer; restarting
 * every instance would only add a cold start to the outage), so liveness fails only when the pool is
 * wedged: no statement through it has succeeded for DATABASE_STALL_SECONDS, it still fails to answer
 * a `SELECT 1` now, and yet a new connection to the same database answers one. Then the connections
 * the pool holds are the problem (stuck past every timeout, or timeouts turned off), and a restart fixes
 * what waiting would not.
 *
 * `check()` is synchronous and never touches the database on the probe's path: once the pool has been
 * quiet for the bound, it starts a check in the background, and answers with the last verdict.
 */
@Injectable()
export class PoolLiveness {
  private readonly logger = new Logger('Liveness');
  private checking = false;
  private lastCheckAt = -Infinity;
  /** When the last check found the pool wedged (performance.now()), until progress is seen after it. */
  private wedgedAt?: number;

  constructor(
    private readonly owned: OwnedPool,
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(DATABASE_TARGET) private readonly target: DatabaseTarget,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  check(): Liveness {
    const now = performance.now();
    const stalledMs = now - this.owned.lastSuccessAt;
    if (this.wedgedAt !== undefined && this.owned.lastSuccessAt > this.wedgedAt) this.wedgedAt = undefined;
    if (stalledMs < this.config.database.stallMs) return { live: true };
    if (!this.checking && now - this.lastCheckAt >= CHECK_INTERVAL_MS) {
      this.checking = true;
      this.lastCheckAt = now;
      void this.probe().finally(() => (this.checking = false));
    }
    return this.wedgedAt === undefined ? { live: true } : { live: false, stalledMs: Math.round(stalledMs) };
  }

  private async probe(): Promise<void> {
    // A statement that succeeds through the pool counts as progress (OwnedPool), which clears the verdict.
    if (await withinBound(this.dataSource.query('SELECT 1'))) return;
    if (!(await this.newConnectionAnswers())) return; // the database itself is unreachable: not ours to fix
    if (this.wedgedAt === undefined) {
      const stalledS = Math.round((performance.now() - this.owned.lastSuccessAt) / 1000);
      this.logger.error(
        `Database pool wedged: no statement through it has succeeded for ${stalledS} s, while a new connection answers; /healthz answers 503 so that the process is restarted`,
      );
    }
    this.wedgedAt = performance.now();
  }

  private async newConnectionAnswers(): Promise<boolean> {
    const { url, host, port, username, database } = this.target.connection;
    const client = new pg.Client({
      connectionString: url,
      host,
      port,
      user: username,
      database,
      application_name: 'agora-liveness',
      connectionTimeoutMillis: Math.min(this.config.database.connectTimeoutMs, PROBE_TIMEOUT_MS),
      query_timeout: PROBE_TIMEOUT_MS,
    });
    client.on('error', () => undefined);
    try {
      await client.connect();
      return await withinBound(client.query('SELECT 1'));
    } catch {
      return false;
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}

/** Whether the promise resolves within PROBE_TIMEOUT_MS (a rejection, now or later, is a no). */
async function withinBound(promise: Promise<unknown>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), PROBE_TIMEOUT_MS)));
  try {
    return await Promise.race([
      promise.then(
        () => true,
        () => false,
      ),
      timedOut,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
