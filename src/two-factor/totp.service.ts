import { UsersService } from '../users/users.service.js';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Secret, TOTP } from 'otpauth';
import QRCode from 'qrcode';
import { DataSource } from 'typeorm';
import { Clock } from '../clock/clock.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { decryptWithSecret, encryptWithSecret } from '../config/key-encryption.js';
import { SecurityNotices } from '../security-notices/security-notices.js';
import { SecondFactors } from '../users/second-factors.js';
import { RecoveryCodes } from './recovery-codes.service.js';
import { CODE_MESSAGES, TwoFactorError } from './two-factor.errors.js';

/** RFC 6238 as every authenticator app does it: HMAC-SHA-1, six digits, 30-second steps. */
const PERIOD = 30;
const DIGITS = 6;
/** Steps before and after the current one a code may belong to (a phone's clock a little off). */
const WINDOW = 1;
const ISSUER = 'Agora';

/** What a code typed for the second step turned out to be. */
export type TotpCheck = 'ok' | 'wrong' | 'replayed';

/** The authenticator app being set up: what the enrolment page shows. */
export interface TotpEnrolment {
  /** The secret in base32, for typing into the app by hand. */
  secret: string;
  /** The `otpauth://` URI the QR code holds. */
  uri: string;
  /** The QR code as an SVG data URL (the pages' CSP allows `data:` images). */
  qrCode: string;
}

/** A code as typed (spaces allowed) in its six digits, or null. */
export function normaliseTotpCode(typed: string): string | null {
  const digits = typed.replace(/\s/g, '');
  return /^[0-9]{6}$/.test(digits) ? digits : null;
}

/**
 * Time-based one-time passwords (RFC 6238) with otpauth: enrolment (a secret sealed under SECRET_KEY,
 * confirmed by a code from the app), the check of a code at the second step with a replay guard (a code
 * of a step at or before the last one accepted is refused, decided in one UPDATE so that two concurrent
 * uses of one code cannot both pass), and turning it off.
 */
@Injectable()
export class TotpService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly recoveryCodes: RecoveryCodes,
    private readonly secondFactors: SecondFactors,
    private readonly notices: SecurityNotices,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly users: UsersService,
  ) {}

  /** Starts (or starts again) setting up an authenticator app: a new secret, not in force until confirmed. */
  async startEnrolment(userId: string): Promise<void> {
    // A second factor set up on an address nobody proved could lock its real owner out (docs/account-security.md).
    await this.users.requireVerifiedEmail(userId);
    const sealed = encryptWithSecret(this.secretKey(), new Secret({ size: 20 }).base32, 'totp-secrets');
    const updated: unknown[] = await this.dataSource.query(
      `WITH started AS (
         UPDATE users SET totp_secret = $2, totp_last_step = NULL WHERE id = $1 AND totp_enabled_at IS NULL RETURNING id)
       SELECT id FROM started`,
      [userId, sealed],
    );
    if (updated.length === 0) throw new TwoFactorError('ALREADY_ENABLED', 'Two-factor authentication is already on.');
  }

  /** The enrolment under way (secret, URI, QR code), or null when none is (not started, or already confirmed). */
  async enrolment(userId: string, username: string): Promise<TotpEnrolment | null> {
    const rows: { totp_secret: string | null; enabled: boolean }[] = await this.dataSource.query(
      `SELECT totp_secret, totp_enabled_at IS NOT NULL AS enabled FROM users WHERE id = $1`,
      [userId],
    );
    const row = rows[0];
    if (!row?.totp_secret || row.enabled) return null;
    const totp = this.totp(this.open(row.totp_secret), username);
    const uri = totp.toString();
    const svg = await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
    return { secret: totp.secret.base32, uri, qrCode: `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}` };
  }

  /**
   * Confirms the enrolment with a code from the app: TOTP is on from now, the code's step is the last
   * used, and the `second-factor-enabled` notice is enqueued. A user who had no second factor before also
   * gets ten new recovery codes, returned here (their only copy); otherwise null (theirs stay).
   */
  async confirm(userId: string, typed: string): Promise<string[] | null> {
    const code = normaliseTotpCode(typed);
    if (!code) throw new TwoFactorError('WRONG_CODE', CODE_MESSAGES.malformed, 'code');
    return this.dataSource.transaction(async (tx) => {
      const rows: { totp_secret: string | null; enabled: boolean }[] = await tx.query(
        `SELECT totp_secret, totp_enabled_at IS NOT NULL AS enabled FROM users WHERE id = $1 FOR UPDATE`,
        [userId],
      );
      const row = rows[0];
      if (row?.enabled) throw new TwoFactorError('ALREADY_ENABLED', 'Two-factor authentication is already on.');
      if (!row?.totp_secret) throw new TwoFactorError('NOT_ENROLLING', 'Start setting up your authenticator app again.');
      const step = this.stepOf(this.open(row.totp_secret), code);
      if (step === null) throw new TwoFactorError('WRONG_CODE', CODE_MESSAGES.wrong, 'code');
      const hadSecondFactor = await this.secondFactors.has(userId, tx);
      await tx.query(`UPDATE users SET totp_enabled_at = $2, totp_last_step = $3 WHERE id = $1`, [userId, this.clock.now(), step]);
      const codes = hadSecondFactor ? null : await this.recoveryCodes.replace(userId, tx);
      await this.notices.notify(userId, { kind: 'second-factor-enabled', method: 'totp' }, { tx });
      return codes;
    });
  }

  /**
   * Checks a code for the second step. `ok`: right, and its step is now the last used; `replayed`: right
   * but of a step already used (or earlier); `wrong`: anything else, TOTP off included.
   */
  async verify(userId: string, typed: string): Promise<TotpCheck> {
    const code = normaliseTotpCode(typed);
    if (!code) return 'wrong';
    const rows: { totp_secret: string }[] = await this.dataSource.query(
      `SELECT totp_secret FROM users WHERE id = $1 AND totp_enabled_at IS NOT NULL`,
      [userId],
    );
    const sealed = rows[0]?.totp_secret;
    if (!sealed) return 'wrong';
    const step = this.stepOf(this.open(sealed), code);
    if (step === null) return 'wrong';
    const accepted: unknown[] = await this.dataSource.query(
      `WITH accepted AS (
         UPDATE users SET totp_last_step = $2
          WHERE id = $1 AND totp_enabled_at IS NOT NULL AND (totp_last_step IS NULL OR totp_last_step < $2)
         RETURNING id)
       SELECT id FROM accepted`,
      [userId, step],
    );
    return accepted.length === 1 ? 'ok' : 'replayed';
  }

  /**
   * Turns the authenticator app off (the caller checked the password) with the `second-factor-disabled`
   * notice; the recovery codes go too when no other second factor is left.
   */
  async disable(userId: string): Promise<void> {
    await this.dataSource.transaction(async (tx) => {
      const off: unknown[] = await tx.query(
        `WITH off AS (
           UPDATE users SET totp_secret = NULL, totp_enabled_at = NULL, totp_last_step = NULL
            WHERE id = $1 AND totp_enabled_at IS NOT NULL RETURNING id)
         SELECT id FROM off`,
        [userId],
      );
      if (off.length === 0) throw new TwoFactorError('NOT_ENABLED', 'Two-factor authentication with an app is not on.');
      if (!(await this.secondFactors.has(userId, tx))) await this.recoveryCodes.removeAll(userId, tx);
      await this.notices.notify(userId, { kind: 'second-factor-disabled', method: 'totp' }, { tx });
    });
  }

  /** The step (30-second counter) of the code if it is right within the window, else null. */
  private stepOf(secret: string, code: string): number | null {
    const timestamp = this.clock.now().getTime();
    const totp = this.totp(secret, '');
    const delta = totp.validate({ token: code, timestamp, window: WINDOW });
    return delta === null ? null : totp.counter({ timestamp }) + delta;
  }

  private totp(secret: string, username: string): TOTP {
    return new TOTP({
      issuer: ISSUER,
      label: username,
      algorithm: 'SHA1',
      digits: DIGITS,
      period: PERIOD,
      secret: Secret.fromBase32(secret),
    });
  }

  private open(sealed: string): string {
    return decryptWithSecret(this.secretKey(), sealed, 'totp-secrets');
  }

  private secretKey(): string {
    if (!this.config.secretKey) throw new Error('SECRET_KEY is not resolved: TOTP secrets are sealed with it');
    return this.config.secretKey;
  }
}
