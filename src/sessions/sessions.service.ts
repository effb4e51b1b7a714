import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import { DataSource, MoreThan, Repository } from 'typeorm';
import { hashSecret } from '../auth/secret-token.js';
import { purgeInBatches } from '../database/batched-purge.js';
import { Clock } from '../clock/clock.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import type { User } from '../users/user.model.js';
import { SessionEntity } from './session.entity.js';

export interface SignedInUser {
  sessionId: string;
  authTime: Date;
  user: Pick<User, 'id' | 'username' | 'name' | 'email'>;
}

const COOKIE_VALUE = /^[A-Za-z0-9_-]{43}$/;

/** How stale `last_seen_at` may get before a request refreshes it (one write per session per interval, not per request). */
const LAST_SEEN_RESOLUTION_MS = 5 * 60_000;

/** A signed-in browser, as its owner sees it in the list of active sessions. */
export interface ActiveSession {
  id: string;
  userAgent: string | null;
  signedInAt: Date;
  lastSeenAt: Date;
  expiresAt: Date;
}

/** Browser sign-in sessions, kept in the database so they survive restarts and span instances. */
@Injectable()
export class SessionsService {
  constructor(
    @InjectRepository(SessionEntity) private readonly sessions: Repository<SessionEntity>,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** A new session; the returned cookie value is its only copy (the database keeps its hash). */
  async create(userId: string, userAgent?: string): Promise<{ cookieValue: string; expiresAt: Date }> {
    const cookieValue = randomBytes(32).toString('base64url');
    const now = this.clock.now();
    const expiresAt = new Date(now.getTime() + this.config.sessionTtlMs);
    await this.sessions.insert({
      tokenHash: hashSecret(cookieValue),
      userId,
      authTime: now,
      lastSeenAt: now,
      expiresAt,
      userAgent: userAgent ? userAgent.slice(0, 256) : null,
    });
    return { cookieValue, expiresAt };
  }

  async resolve(cookieValue: string | undefined): Promise<SignedInUser | null> {
    if (!cookieValue || !COOKIE_VALUE.test(cookieValue)) return null;
    const rows: { id: string; auth_time: Date; last_seen_at: Date; user_id: string; username: string; name: string; email: string }[] =
      await this.dataSource.query(
        `SELECT s.id, s.auth_time, s.last_seen_at, u.id AS user_id, u.username, u.name, u.email
         FROM sessions s JOIN users u ON u.id = s.user_id
        WHERE s.token_hash = $1 AND s.expires_at > $2 AND u.state = 'active'`,
        [hashSecret(cookieValue), this.clock.now()],
      );
    const row = rows[0];
    if (!row) return null;
    const now = this.clock.now();
    if (now.getTime() - row.last_seen_at.getTime() > LAST_SEEN_RESOLUTION_MS)
      await this.sessions.update({ id: row.id }, { lastSeenAt: now });
    return {
      sessionId: row.id,
      authTime: row.auth_time,
      user: { id: row.user_id, username: row.username, name: row.name, email: row.email },
    };
  }

  /** Deletes sessions past their expiry; returns how many. */
  async purgeExpired(): Promise<number> {
    return purgeInBatches((text, values) => this.sessions.query(text, values), 'sessions', 't.expires_at <= $1', [this.clock.now()]);
  }

  /** The user's sessions that still work, most recently active first. */
  async listForUser(userId: string): Promise<ActiveSession[]> {
    const rows = await this.sessions.find({
      where: { userId, expiresAt: MoreThan(this.clock.now()) },
      order: { lastSeenAt: 'DESC', createdAt: 'DESC' },
    });
    return rows.map((s) => ({
      id: s.id,
      userAgent: s.userAgent,
      signedInAt: s.authTime,
      lastSeenAt: s.lastSeenAt,
      expiresAt: s.expiresAt,
    }));
  }

  /** Ends every session of the user but `keep` (the browser that asked); returns how many ended. */
  async endAllFor(userId: string, keep?: string): Promise<number> {
    const query = this.sessions.createQueryBuilder().delete().where('user_id = :userId', { userId });
    if (keep) query.andWhere('id <> :keep', { keep });
    return (await query.execute()).affected ?? 0;
  }

  async destroy(cookieValue: string | undefined): Promise<void> {
    if (cookieValue && COOKIE_VALUE.test(cookieValue)) await this.sessions.delete({ tokenHash: hashSecret(cookieValue) });
  }
}
