import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { SecurityNotices } from '../security-notices/security-notices.js';
import type { User } from './user.model.js';
import { UsersService } from './users.service.js';

/** What an operator's reset took away. */
export interface SecondFactorResetResult {
  user: User;
  totpRemoved: boolean;
  recoveryCodesRemoved: number;
  passkeysRemoved: number;
  /** Whether the user was told (only when something was removed). */
  noticeSent: boolean;
}

/**
 * An operator removes a user's second factors (the authenticator app, recovery codes and passkeys) for a
 * user who lost them and proved who they are some other way (`users:reset-second-factor`). As GitLab's
 * administrators' "disable two-factor authentication", the user's sessions stay: the reset is for someone
 * who cannot sign in, and whoever holds a session signed in before. The user is told by e-mail
 * (`second-factor-reset`), in the same transaction as the change.
 */
@Injectable()
export class SecondFactorReset {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly users: UsersService,
    private readonly notices: SecurityNotices,
  ) {}

  async reset(username: string): Promise<SecondFactorResetResult> {
    const user = await this.users.getByUsername(username);
    return this.dataSource.transaction(async (tx) => {
      const removed = await this.removeAllIn(tx, user.id);
      const any = removed.totpRemoved || removed.recoveryCodesRemoved + removed.passkeysRemoved > 0;
      if (any) await this.notices.notify(user.id, { kind: 'second-factor-reset' }, { tx });
      return { user, ...removed, noticeSent: any };
    });
  }

  /** Removes the user's authenticator app, recovery codes and passkeys in the caller's transaction; says what went. */
  async removeAllIn(
    tx: EntityManager,
    userId: string,
  ): Promise<{ totpRemoved: boolean; recoveryCodesRemoved: number; passkeysRemoved: number }> {
    const count = async (sql: string): Promise<number> => ((await tx.query(sql, [userId])) as { n: number }[])[0]!.n;
    const totp = await count(
      `WITH reset AS (
         UPDATE users SET totp_secret = NULL, totp_enabled_at = NULL, totp_last_step = NULL
          WHERE id = $1 AND (totp_secret IS NOT NULL OR totp_enabled_at IS NOT NULL) RETURNING 1)
       SELECT count(*)::int AS n FROM reset`,
    );
    const recoveryCodes = await count(
      `WITH d AS (DELETE FROM recovery_codes WHERE user_id = $1 RETURNING 1) SELECT count(*)::int AS n FROM d`,
    );
    const passkeys = await count(`WITH d AS (DELETE FROM passkeys WHERE user_id = $1 RETURNING 1) SELECT count(*)::int AS n FROM d`);
    return { totpRemoved: totp > 0, recoveryCodesRemoved: recoveryCodes, passkeysRemoved: passkeys };
  }
}
