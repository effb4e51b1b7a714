import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import { DataSource, EntityManager, MoreThan, Repository } from 'typeorm';
import type { CredentialRow } from '../auth/principal.js';
import { hashSecret } from '../auth/secret-token.js';
import { EntityTable } from '../database/entity-table.js';
import { PURGE_BATCH_SIZE } from '../database/batched-purge.js';
import { Clock } from '../clock/clock.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { UsersService } from '../users/users.service.js';
import { SessionEntity } from './session.entity.js';
import { SessionError } from './sessions.errors.js';
import { SessionEndings } from './session-endings.js';
import { isUuid } from '../database/uuid.js';
import { AuthMethod, toAmr } from '../auth/authentication-methods.js';
import type { SignedInUser } from '../web/page-sessions.js';

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
    private readonly endings: SessionEndings,
    users: UsersService,
  ) {
    const table = EntityTable.of(dataSource, SessionEntity, 's');
    this.signedIn = table.pick('id', 'userId', 'authTime', 'amr', 'reauthenticatedAt', 'lastSeenAt');
    this.listed = table.pick('id', 'userAgent', 'authTime', 'lastSeenAt', 'expiresAt');
    this.resolveSql = `SELECT ${this.signedIn.select}, ${users.claimsAs('u')}
         FROM sessions s JOIN users u ON u.id = s.user_id
        WHERE s.token_hash = $1 AND s.expires_at > $2 AND u.state = 'active'`;
  }

  /** What a request signed in with a session reads of it. */
  private readonly signedIn: EntityTable<
    Pick<SessionEntity, 'id' | 'userId' | 'authTime' | 'amr' | 'reauthenticatedAt' | 'lastSeenAt'>,
    SessionEntity
  >;
  /** What the list of active sessions shows of one. */
  private readonly listed: EntityTable<Pick<SessionEntity, 'id' | 'userAgent' | 'authTime' | 'lastSeenAt' | 'expiresAt'>, SessionEntity>;
  /** The live session of a cookie with the user's claims: one statement per request of a signed-in browser. */
  private readonly resolveSql: string;

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
    const rows: CredentialRow[] = await this.dataSource.query(this.resolveSql, [hashSecret(cookieValue), this.clock.now()]);
    const row = rows[0];
    if (!row) return null;
    const session = this.signedIn.map(row);
    const now = this.clock.now();
    if (now.getTime() - session.lastSeenAt.getTime() > LAST_SEEN_RESOLUTION_MS)
      await this.sessions.update({ id: session.id }, { lastSeenAt: now });
    return {
      sessionId: session.id,
      authTime: session.authTime,
      amr: toAmr(session.amr),
      reauthenticatedAt: session.reauthenticatedAt,
      user: { id: session.userId, username: row.username, name: row.name, email: row.email, emailVerified: row.email_verified },
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

  /**
   * Ends sessions past their expiry, as any other ending (SessionEndings: the applications that got an
   * id_token in one are told), in short transactions of at most `batchSize` sessions; returns how many.
   * A session another transaction holds (being ended right now) is skipped: that one tells.
   */
  async purgeExpired(batchSize = PURGE_BATCH_SIZE): Promise<number> {
    const now = this.clock.now();
    let total = 0;
    for (;;) {
      const ended = await this.dataSource.transaction(async (tx) => {
        const rows = (await tx.query('SELECT id FROM sessions WHERE expires_at <= $1 ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED', [
          now,
          batchSize,
        ])) as { id: string }[];
        return this.endLocked(
          rows.map((row) => row.id),
          tx,
        );
      });
      total += ended;
      if (ended < batchSize) return total;
    }
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
    const end = async (manager: EntityManager): Promise<number> => {
      await manager.query(
        'DELETE FROM pending_sign_ins WHERE user_id = $1 AND ($2::uuid IS NULL OR step_up_session_id IS DISTINCT FROM $2::uuid)',
        [userId, options.keep ?? null],
      );
      const ending = (await manager.query(
        `SELECT id FROM sessions WHERE user_id = $1 AND ($2::uuid IS NULL OR id <> $2::uuid) ORDER BY id FOR UPDATE`,
        [userId, options.keep ?? null],
      )) as { id: string }[];
      return this.endLocked(
        ending.map((row) => row.id),
        manager,
      );
    };
    return options.tx ? end(options.tx) : this.dataSource.transaction(end);
  }

  /**
   * Ends one of the user's sessions (the security page's "Sign out" beside another browser) and returns
   * it as it was listed. Another user's session, or one that already ended, is not found.
   */
  async endOne(userId: string, sessionId: string): Promise<ActiveSession> {
    const ended = !isUuid(sessionId)
      ? undefined
      : await this.dataSource.transaction(async (tx) => {
          const [row] = (await tx.query(
            `SELECT ${this.listed.select} FROM sessions s WHERE s.id = $1 AND s.user_id = $2 AND s.expires_at > $3 FOR UPDATE`,
            [sessionId, userId, this.clock.now()],
          )) as object[];
          if (row) await this.endLocked([sessionId], tx);
          return row;
        });
    if (!ended) throw new SessionError('SESSION_NOT_FOUND', 'No such session: it may have ended already', 'id');
    const row = this.listed.map(ended);
    return { id: row.id, userAgent: row.userAgent, signedInAt: row.authTime, lastSeenAt: row.lastSeenAt, expiresAt: row.expiresAt };
  }

  /** Ends the session of this cookie (signing out, or a new sign-in in the same browser). */
  async destroy(cookieValue: string | undefined): Promise<void> {
    if (!cookieValue || !COOKIE_VALUE.test(cookieValue)) return;
    await this.dataSource.transaction(async (tx) => {
      const rows = (await tx.query('SELECT id FROM sessions WHERE token_hash = $1 FOR UPDATE', [hashSecret(cookieValue)])) as {
        id: string;
      }[];
      await this.endLocked(
        rows.map((row) => row.id),
        tx,
      );
    });
  }

  /**
   * Ends sessions already locked in `tx` (FOR UPDATE): those who listen (SessionEndings: back-channel
   * logout) are told while the rows are still there, then the rows go. Returns how many ended.
   */
  private async endLocked(sessionIds: string[], tx: EntityManager): Promise<number> {
    if (sessionIds.length === 0) return 0;
    await this.endings.notify(sessionIds, tx);
    await tx.query('DELETE FROM sessions WHERE id = ANY($1::uuid[])', [sessionIds]);
    return sessionIds.length;
  }
}
