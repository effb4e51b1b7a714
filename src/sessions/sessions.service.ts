import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import { DataSource, EntityManager, MoreThan, Repository } from 'typeorm';
import { hashSecret } from '../auth/secret-token.js';
import { purgeInBatches } from '../database/batched-purge.js';
import { Clock } from '../clock/clock.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import type { User } from '../users/user.model.js';
import { SessionEntity } from './session.entity.js';
import { SessionError } from './sessions.errors.js';
import { isUuid } from '../database/uuid.js';
import { AuthMethod, toAmr } from './authentication-methods.js';

export interface SignedInUser {
  sessionId: string;
  /** When the user last proved who they are in this session: the sign-in, or a later second step. */
  authTime: Date;
  /** How (RFC 8176): `['pwd']`, `['pwd', 'otp', 'mfa']`, `['swk', 'mfa']`… */
  amr: AuthMethod[];
  /** When the password was last typed again in this session for a sensitive change (sudo mode); null: never. */
  reauthenticatedAt: Date | null;
  user: Pick<User, 'id' | 'username' | 'name' | 'email' | 'emailVerified'>;
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

  /**
   * A new session, signed in with these methods (RFC 8176 `amr`, already combined: `combineAmr`); the
   * returned cookie value is its only copy (the database keeps its hash).
   */
  async create(userId: string, amr: AuthMethod[], userAgent?: string): Promise<{ cookieValue: string; expiresAt: Date }> {
    const cookieValue = randomBytes(32).toString('base64url');
    const now = this.clock.now();
    const expiresAt = new Date(now.getTime() + this.config.sessionTtlMs);
    await this.sessions.insert({
      tokenHash: hashSecret(cookieValue),
      userId,
      authTime: now,
      amr,
      lastSeenAt: now,
      expiresAt,
      userAgent: userAgent ? userAgent.slice(0, 256) : null,
    });
    return { cookieValue, expiresAt };
  }

  async resolve(cookieValue: string | undefined): Promise<SignedInUser | null> {
    if (!cookieValue || !COOKIE_VALUE.test(cookieValue)) return null;
    const rows: {
      id: string;
      auth_time: Date;
      amr: string[];
      reauthenticated_at: Date | null;
      last_seen_at: Date;
      user_id: string;
      username: string;
      name: string;
      email: string;
      email_verified: boolean;
    }[] = await this.dataSource.query(
      `SELECT s.id, s.auth_time, s.amr, s.reauthenticated_at, s.last_seen_at, u.id AS user_id, u.username, u.name, u.email,
                u.email_verified_at IS NOT NULL AS email_verified
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
      amr: toAmr(row.amr),
      reauthenticatedAt: row.reauthenticated_at,
      user: { id: row.user_id, username: row.username, name: row.name, email: row.email, emailVerified: row.email_verified },
    };
  }

  /**
   * The user proved more in this session (a second step asked for by an application, acr_values): its
   * methods become `amr` and its auth_time now.
   */
  async stepUp(sessionId: string, amr: AuthMethod[]): Promise<void> {
    await this.sessions.update({ id: sessionId }, { amr, authTime: this.clock.now() });
  }

  /**
   * The user typed the password again in this session for a sensitive change (sudo mode). Unlike `stepUp`,
   * nothing OpenID Connect reports moves: the session signed in as and when it did.
   */
  async reauthenticated(sessionId: string): Promise<void> {
    await this.sessions.update({ id: sessionId }, { reauthenticatedAt: this.clock.now() });
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

  /**
   * Ends every session of the user but `keep` (the browser that asked), and every sign-in of theirs still
   * waiting for its second step (its password may be the one just replaced: it must not finish; a step-up
   * of the kept session stays). In the
   * caller's transaction when `tx` is given. Returns how many sessions ended.
   */
  async endAllFor(userId: string, options: { keep?: string; tx?: EntityManager } = {}): Promise<number> {
    const manager = options.tx ?? this.dataSource.manager;
    await manager.query(
      'DELETE FROM pending_sign_ins WHERE user_id = $1 AND ($2::uuid IS NULL OR step_up_session_id IS DISTINCT FROM $2::uuid)',
      [userId, options.keep ?? null],
    );
    const ended = (await manager.query(
      `WITH ended AS (DELETE FROM sessions WHERE user_id = $1 AND ($2::uuid IS NULL OR id <> $2::uuid) RETURNING id) SELECT count(*)::int AS n FROM ended`,
      [userId, options.keep ?? null],
    )) as { n: number }[];
    return ended[0]?.n ?? 0;
  }

  /**
   * Ends one of the user's sessions (the security page's "Sign out" beside another browser) and returns
   * it as it was listed. Another user's session, or one that already ended, is not found.
   */
  async endOne(userId: string, sessionId: string): Promise<ActiveSession> {
    const ended: { id: string; user_agent: string | null; auth_time: Date; last_seen_at: Date; expires_at: Date }[] = isUuid(sessionId)
      ? await this.dataSource.query(
          `WITH ended AS (DELETE FROM sessions WHERE id = $1 AND user_id = $2 AND expires_at > $3 RETURNING id, user_agent, auth_time, last_seen_at, expires_at)
           SELECT * FROM ended`,
          [sessionId, userId, this.clock.now()],
        )
      : [];
    const row = ended[0];
    if (!row) throw new SessionError('SESSION_NOT_FOUND', 'No such session: it may have ended already', 'id');
    return { id: row.id, userAgent: row.user_agent, signedInAt: row.auth_time, lastSeenAt: row.last_seen_at, expiresAt: row.expires_at };
  }

  async destroy(cookieValue: string | undefined): Promise<void> {
    if (cookieValue && COOKIE_VALUE.test(cookieValue)) await this.sessions.delete({ tokenHash: hashSecret(cookieValue) });
  }
}
