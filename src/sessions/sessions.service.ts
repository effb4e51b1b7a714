import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import { DataSource, Repository } from 'typeorm';
import { hashSecret } from '../auth/secret-token.js';
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
  async create(userId: string): Promise<{ cookieValue: string; expiresAt: Date }> {
    const cookieValue = randomBytes(32).toString('base64url');
    const now = this.clock.now();
    const expiresAt = new Date(now.getTime() + this.config.sessionTtlMs);
    await this.sessions.insert({ tokenHash: hashSecret(cookieValue), userId, authTime: now, lastSeenAt: now, expiresAt });
    return { cookieValue, expiresAt };
  }

  async resolve(cookieValue: string | undefined): Promise<SignedInUser | null> {
    if (!cookieValue || !COOKIE_VALUE.test(cookieValue)) return null;
    const rows: { id: string; auth_time: Date; user_id: string; username: string; name: string; email: string }[] =
      await this.dataSource.query(
        `SELECT s.id, s.auth_time, u.id AS user_id, u.username, u.name, u.email
         FROM sessions s JOIN users u ON u.id = s.user_id
        WHERE s.token_hash = $1 AND s.expires_at > $2 AND u.state = 'active'`,
        [hashSecret(cookieValue), this.clock.now()],
      );
    const row = rows[0];
    if (!row) return null;
    return {
      sessionId: row.id,
      authTime: row.auth_time,
      user: { id: row.user_id, username: row.username, name: row.name, email: row.email },
    };
  }

  /** Deletes sessions past their expiry; returns how many. */
  async purgeExpired(): Promise<number> {
    const result = await this.sessions.createQueryBuilder().delete().where('expires_at <= :now', { now: this.clock.now() }).execute();
    return result.affected ?? 0;
  }

  async destroy(cookieValue: string | undefined): Promise<void> {
    if (cookieValue && COOKIE_VALUE.test(cookieValue)) await this.sessions.delete({ tokenHash: hashSecret(cookieValue) });
  }
}
