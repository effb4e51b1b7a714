import { Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { Principal } from '../auth/principal.js';
import { Clock } from '../clock/clock.js';

interface Tally {
  subject: string;
  day: string;
  userId: string | null;
  calls: number;
  last: Date;
}

export interface UsageRow {
  subject: string;
  credential: string | null;
  username: string | null;
  calls: number;
  lastCalledAt: Date;
}

const FLUSH_INTERVAL_MS = 10_000;

/**
 * Counts legacy API calls per credential and day. Calls are tallied in memory and written every ten
 * seconds (and at shutdown) in one statement, so counting costs the request nothing measurable.
 */
@Injectable()
export class LegacyApiUsageService implements OnModuleInit, OnApplicationShutdown {
  private tallies = new Map<string, Tally>();
  private timer?: NodeJS.Timeout;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    this.timer = setInterval(() => void this.flush().catch(() => undefined), FLUSH_INTERVAL_MS);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  record(principal: Principal | null): void {
    const now = this.clock.now();
    const subject = principal ? `${principal.credential.kind}:${principal.credential.id}` : 'anonymous';
    const day = now.toISOString().slice(0, 10);
    const key = `${subject}|${day}`;
    const tally = this.tallies.get(key);
    if (tally) {
      tally.calls++;
      tally.last = now;
    } else {
      this.tallies.set(key, { subject, day, userId: principal?.user?.id ?? null, calls: 1, last: now });
    }
  }

  /** Writes the pending counts. */
  async flush(): Promise<void> {
    if (this.tallies.size === 0) return;
    const batch = [...this.tallies.values()];
    this.tallies = new Map();
    await this.dataSource.query(
      `INSERT INTO legacy_api_usage AS u (subject, day, user_id, calls, last_called_at)
       SELECT * FROM unnest($1::text[], $2::date[], $3::uuid[], $4::bigint[], $5::timestamptz[])
       ON CONFLICT (subject, day) DO UPDATE SET calls = u.calls + excluded.calls,
         last_called_at = greatest(u.last_called_at, excluded.last_called_at)`,
      [
        batch.map((t) => t.subject),
        batch.map((t) => t.day),
        batch.map((t) => t.userId),
        batch.map((t) => t.calls),
        batch.map((t) => t.last),
      ],
    );
  }

  /** Calls per credential since `since`, most used first, with the token's name and its user. */
  async report(since: Date): Promise<UsageRow[]> {
    await this.flush();
    const rows = (await this.dataSource.query(
      `SELECT u.subject, sum(u.calls)::bigint AS calls, max(u.last_called_at) AS last_called_at, us.username,
              coalesce(p.name, a.name) AS credential
         FROM legacy_api_usage u
         LEFT JOIN users us ON us.id = u.user_id
         LEFT JOIN personal_access_tokens p ON u.subject = 'personal_access_token:' || p.id::text
         LEFT JOIN oauth_access_tokens t ON u.subject = 'oauth_access_token:' || t.id::text
         LEFT JOIN oauth_applications a ON a.id = t.application_id
        WHERE u.day >= $1::date
        GROUP BY u.subject, us.username, p.name, a.name
        ORDER BY calls DESC`,
      [since.toISOString().slice(0, 10)],
    )) as { subject: string; calls: string; last_called_at: Date; username: string | null; credential: string | null }[];
    return rows.map((r) => ({
      subject: r.subject,
      credential: r.credential,
      username: r.username,
      calls: Number(r.calls),
      lastCalledAt: r.last_called_at,
    }));
  }
}
