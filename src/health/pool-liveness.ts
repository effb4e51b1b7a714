import { Inject, Injectable, Logger } from '@nestjs/common';
import pg from 'pg';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import type { DatabaseTarget } from '../database/database-target.js';
import { DATABASE_TARGET } from '../database/database-tokens.js';
import { OwnedPool } from '../database/owned-pool.js';
import {
  LIVENESS_CHECK_INTERVAL_MS as CHECK_INTERVAL_MS,
  LIVENESS_PROBE_TIMEOUT_MS as PROBE_TIMEOUT_MS,
  withinBound,
} from './probe-bounds.js';

export type Liveness = { live: true } | { live: false; stalledMs: number };

/**
 * Whether the process can still reach a working state by itself, for the liveness probe. A database
 * outage is not a reason to restart (readiness takes the instance out of the load balancer; restarting
 * every instance would only add a cold start to the outage), nor is a slow or locked database (its
 * statements get answers, if only 57014 cancellations: that is progress), so liveness fails only when
 * the pool is wedged: no statement through it has had any answer from the server for
 * DATABASE_STALL_SECONDS, a `SELECT 1` through it (waiting for a connection without being shed) still
 * gets none now, and yet a new connection to the same PostgreSQL server answers one. Then the
 * connections the pool holds are the problem (stuck past every timeout, or timeouts turned off), and a
 * restart fixes what waiting would not.
 *
 * On the embedded database no second connection is opened (PGlite serves one session, and concurrent
 * connections through its socket gave wrong results): the database runs inside this process, so it
 * cannot be down while the process is fine, and a pool that answers nothing is this process's to fix.
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
    @Inject(DATABASE_TARGET) private readonly target: DatabaseTarget,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  check(): Liveness {
    const now = performance.now();
    const stalledMs = now - this.owned.lastReplyAt;
    if (this.wedgedAt !== undefined && this.owned.lastReplyAt > this.wedgedAt) this.wedgedAt = undefined;
    if (stalledMs < this.config.database.stallMs) return { live: true };
    if (!this.checking && now - this.lastCheckAt >= CHECK_INTERVAL_MS) {
      this.checking = true;
      this.lastCheckAt = now;
      void this.probe().finally(() => (this.checking = false));
    }
    return this.wedgedAt === undefined ? { live: true } : { live: false, stalledMs: Math.round(stalledMs) };
  }

  private async probe(): Promise<void> {
    // An answer through the pool (this one or any other, an error with a SQLSTATE included) counts as
    // progress (OwnedPool), which clears the verdict.
    const asked = performance.now();
    if ((await withinBound(this.owned.selectOne(), PROBE_TIMEOUT_MS)) || this.owned.lastReplyAt >= asked) return;
    const embedded = this.target.kind === 'embedded';
    if (!embedded && !(await this.newConnectionAnswers())) return; // the server itself is unreachable: not ours to fix
    if (this.wedgedAt === undefined) {
      const stalledS = Math.round((performance.now() - this.owned.lastReplyAt) / 1000);
      this.logger.error(
        `Database pool wedged: no statement through it has had an answer for ${stalledS} s, ` +
          (embedded ? 'from the embedded database in this process' : 'while a new connection answers') +
          '; /healthz answers 503 so that the process is restarted',
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
      return await withinBound(client.query('SELECT 1'), PROBE_TIMEOUT_MS);
    } catch {
      return false;
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}
