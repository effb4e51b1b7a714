import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { Clock } from '../clock/clock.js';

/** The second factors a user has set up. */
export interface SecondFactorMethods {
  /** An authenticator app (TOTP) confirmed with a code. */
  totp: boolean;
  /** Passkeys registered (each can be the second step, or sign in alone). */
  passkeys: number;
  /** Recovery codes not used yet. */
  recoveryCodesLeft: number;
}

/** An organizer that requires a second factor of its team, of a member who has none (GitLab's grace period banner). */
export interface SecondFactorRequirement {
  organizerName: string;
  /** From then on the member cannot act for the organizer until they set one up. */
  deadline: Date;
  /** Whether the deadline has passed. */
  passed: boolean;
}

/**
 * Whether a user has a second factor, and which: one statement over the users, passkeys and recovery
 * codes tables, for the sign-in's second step, the security page, organizers that require one, and
 * applications that ask for one (acr_values).
 */
@Injectable()
export class SecondFactors {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly clock: Clock,
  ) {}

  async of(userId: string, tx?: EntityManager): Promise<SecondFactorMethods> {
    const rows: { totp: boolean; passkeys: number; recovery_codes_left: number }[] = await (tx ?? this.dataSource).query(
      `SELECT u.totp_enabled_at IS NOT NULL AS totp,
              (SELECT count(*)::int FROM passkeys p WHERE p.user_id = u.id) AS passkeys,
              (SELECT count(*)::int FROM recovery_codes r WHERE r.user_id = u.id AND r.used_at IS NULL) AS recovery_codes_left
         FROM users u WHERE u.id = $1`,
      [userId],
    );
    const row = rows[0];
    return { totp: row?.totp ?? false, passkeys: row?.passkeys ?? 0, recoveryCodesLeft: row?.recovery_codes_left ?? 0 };
  }

  /** A TOTP app or at least one passkey: what "has a second factor" means everywhere. */
  async has(userId: string, tx?: EntityManager): Promise<boolean> {
    const methods = await this.of(userId, tx);
    return methods.totp || methods.passkeys > 0;
  }

  /**
   * The organizers the user belongs to that require a second factor, while the user has none: what the
   * account and security pages warn about, soonest deadline first. The deadline is the requirement's
   * start, or the member's joining if later, plus the organizer's grace period (as EventsReader decides).
   */
  async requiredOf(userId: string): Promise<SecondFactorRequirement[]> {
    const rows: { name: string; deadline: Date | string }[] = await this.dataSource.query(
      `SELECT o.name, GREATEST(o.second_factor_required_since, m.created_at) + o.second_factor_grace_hours * interval '1 hour' AS deadline
         FROM organizer_members m
         JOIN organizers o ON o.id = m.organizer_id
         JOIN users u ON u.id = m.user_id
        WHERE m.user_id = $1 AND o.second_factor_required_since IS NOT NULL AND NOT ${hasSecondFactorSql('u')}
        ORDER BY 2, 1`,
      [userId],
    );
    const now = this.clock.now().getTime();
    return rows.map((r) => {
      const deadline = new Date(r.deadline);
      return { organizerName: r.name, deadline, passed: deadline.getTime() <= now };
    });
  }
}

/** The SQL condition "user `alias` has a second factor", for statements that check it among other things. */
export function hasSecondFactorSql(alias: string): string {
  return `(${alias}.totp_enabled_at IS NOT NULL OR EXISTS (SELECT 1 FROM passkeys p2f WHERE p2f.user_id = ${alias}.id))`;
}
