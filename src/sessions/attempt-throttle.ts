import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { createHash } from 'node:crypto';
import { DataSource, EntityManager, MoreThan, Repository } from 'typeorm';
import { Clock } from '../clock/clock.js';
import { purgeInBatches } from '../database/batched-purge.js';
import { UserError } from '../users/users.errors.js';
import { CountedAttemptEntity } from './counted-attempt.entity.js';
import { Metrics } from '../metrics/metrics.js';

const WINDOW_MS = 15 * 60_000;
/** Failed sign-ins allowed in the window: per account (whether typed as username or e-mail), and per client address. */
export const SIGN_IN_LIMITS = { account: 10, ip: 50 } as const;
/** Accounts one client address may create in an hour, and sign-ups refused as "taken" it may cause. */
export const SIGN_UP_LIMIT = { perAddress: 10, failedPerAddress: 20, windowMs: 60 * 60_000 } as const;
/** Wrong user codes (RFC 8628 §5.1, `/oauth/device`) allowed in the window: per signed-in user, and per client address. */
export const DEVICE_CODE_LIMITS = { user: 10, ip: 50 } as const;
/**
 * Wrong second-step codes (authenticator or recovery codes, `/sign-in/second-factor`) allowed in the
 * window: per account, and per client address. Ten guesses at three live six-digit codes every 15
 * minutes, behind a right password, is a chance of 1 in 33,000 per window.
 */
export const SECOND_STEP_LIMITS = { user: 10, ip: 50 } as const;
/** Passkey answers refused (signing in with a passkey, alone or as the second step) allowed in the window per client address. */
export const PASSKEY_LIMITS = { ip: 20 } as const;

/** "Try again in 15 minutes.": how long a throttled visitor waits, in the words the pages use. */
export function tryAgainIn(seconds: number): string {
  const minutes = Math.ceil(seconds / 60);
  return `Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`;
}

/**
 * Mails of links (docs/account-security.md), an hour's window each: password resets asked for one typed
 * address and from one client address (both answered 429), and mailed to one account (past it, the
 * answer stays the same and no mail goes: whether an account exists is not told); verification links sent
 * again for one account and to one address; "someone tried to sign up with your address" mails to one address.
 */
export const LINK_MAIL_LIMITS = {
  'reset-email': 5,
  'reset-ip': 20,
  'reset-user': 3,
  'verify-user': 5,
  'verify-email': 5,
  'signup-mail': 3,
  windowMs: 60 * 60_000,
} as const;
export type LinkMailSubject = Exclude<keyof typeof LINK_MAIL_LIMITS, 'windowMs'>;

type SubjectKind =
  | 'sign-in-account'
  | 'sign-in-ip'
  | 'signup'
  | 'signup-failed'
  | 'device-user'
  | 'device-ip'
  | 'second-user'
  | 'second-ip'
  | 'passkey-ip'
  | LinkMailSubject;

function subject(kind: SubjectKind, value: string): string {
  return `${kind}:${createHash('sha256').update(value.trim().toLowerCase()).digest('hex')}`;
}

/** A 64-bit advisory lock key for a subject, the same on every instance. */
function lockKey(key: string): bigint {
  return BigInt.asIntN(64, BigInt(`0x${createHash('sha256').update(key).digest('hex').slice(0, 16)}`));
}

interface Quota {
  subject: string;
  limit: number;
  windowMs: number;
}

/** A sign-up counted in advance against both of its address's limits, until `settleSignUp` knows the outcome. */
export type SignUpReservation =
  { granted: true; accountRow: string; failureRow: string } | { granted: false; retryAfterSeconds: number; limit: 'accounts' | 'failures' };

/**
 * Throttles attempts that can be abused, each counted per subject (an account, a user, a client address,
 * a typed address) within a window: passwords (too many failures for one account, or from one address,
 * within 15 minutes make further attempts wait: HTTP 429 with Retry-After), sign-ups (10 new accounts and
 * 20 "taken" answers per address and hour, to slow mass sign-ups and account probing), device-flow user
 * codes, second-step codes, passkey answers, and mailed links. Kept in the database (`counted_attempts`)
 * so every instance sees the same counts; each check and its record are one transaction under advisory
 * locks on the subjects, so concurrent requests, on any number of instances, cannot overshoot a limit.
 */
@Injectable()
export class AttemptThrottle {
  constructor(
    @InjectRepository(CountedAttemptEntity) private readonly attempts: Repository<CountedAttemptEntity>,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly clock: Clock,
    private readonly metrics: Metrics,
  ) {}

  /**
   * 0 when this password check may run, in which case it is already recorded as a failure of both the
   * account (`UsersService.throttleKey`: the same whether the user typed username or e-mail) and the address (a success takes that back: `recordSuccess`); otherwise the seconds
   * to wait, and nothing is recorded.
   */
  async reserveAttempt(account: string, ip: string): Promise<number> {
    const { retryAfterSeconds } = await this.reserve([
      { subject: subject('sign-in-account', account), limit: SIGN_IN_LIMITS.account, windowMs: WINDOW_MS },
      { subject: subject('sign-in-ip', ip), limit: SIGN_IN_LIMITS.ip, windowMs: WINDOW_MS },
    ]);
    if (retryAfterSeconds > 0) this.metrics.throttled('sign_in');
    return retryAfterSeconds;
  }

  /**
   * A successful attempt takes back the failure it reserved, for the account and for the address (the
   * newest row of each: which one does not change the count). Earlier failures keep counting: the
   * owner signing in must not wipe the guesses someone else made from elsewhere.
   */
  async recordSuccess(account: string, ip: string): Promise<void> {
    await this.takeBack([subject('sign-in-account', account), subject('sign-in-ip', ip)]);
  }

  /**
   * 0 when this user may try a user code at `/oauth/device`, in which case it is already recorded as a
   * wrong code of the user and the address (`recordDeviceCodeFound` takes that back when the code
   * exists); otherwise the seconds to wait, and nothing is recorded. Guessing a live code takes
   * billions of tries (RFC 8628 §5.1): this keeps anyone far from that.
   */
  async reserveDeviceCodeAttempt(userId: string, ip: string): Promise<number> {
    const { retryAfterSeconds } = await this.reserve([
      { subject: subject('device-user', userId), limit: DEVICE_CODE_LIMITS.user, windowMs: WINDOW_MS },
      { subject: subject('device-ip', ip), limit: DEVICE_CODE_LIMITS.ip, windowMs: WINDOW_MS },
    ]);
    if (retryAfterSeconds > 0) this.metrics.throttled('device_code');
    return retryAfterSeconds;
  }

  async recordDeviceCodeFound(userId: string, ip: string): Promise<void> {
    await this.takeBack([subject('device-user', userId), subject('device-ip', ip)]);
  }

  /**
   * 0 when this user may try a second-step code (an authenticator or a recovery code), in which case it
   * is already recorded as a wrong code of the account and the address (`recordSecondStepSuccess` takes
   * that back when the code is right); otherwise the seconds to wait, and nothing is recorded.
   */
  async reserveSecondStep(userId: string, ip: string): Promise<number> {
    const { retryAfterSeconds } = await this.reserve([
      { subject: subject('second-user', userId), limit: SECOND_STEP_LIMITS.user, windowMs: WINDOW_MS },
      { subject: subject('second-ip', ip), limit: SECOND_STEP_LIMITS.ip, windowMs: WINDOW_MS },
    ]);
    if (retryAfterSeconds > 0) this.metrics.throttled('second_step');
    return retryAfterSeconds;
  }

  async recordSecondStepSuccess(userId: string, ip: string): Promise<void> {
    await this.takeBack([subject('second-user', userId), subject('second-ip', ip)]);
  }

  /**
   * 0 when a passkey's answer from this address may be checked, in which case it is already recorded as
   * refused (`recordPasskeyAccepted` takes that back); otherwise the seconds to wait, nothing recorded.
   * A passkey cannot be guessed, but each check costs a signature verification and a challenge lookup,
   * and answers replayed or forged in bulk are someone probing.
   */
  async reservePasskeyAttempt(ip: string): Promise<number> {
    const { retryAfterSeconds } = await this.reserve([
      { subject: subject('passkey-ip', ip), limit: PASSKEY_LIMITS.ip, windowMs: WINDOW_MS },
    ]);
    if (retryAfterSeconds > 0) this.metrics.throttled('passkey');
    return retryAfterSeconds;
  }

  async recordPasskeyAccepted(ip: string): Promise<void> {
    await this.takeBack([subject('passkey-ip', ip)]);
  }

  /** Deletes the newest row of each subject (which one does not change the count). */
  private async takeBack(keys: string[]): Promise<void> {
    for (const key of keys) {
      await this.attempts.query(
        `DELETE FROM counted_attempts WHERE id = (SELECT id FROM counted_attempts WHERE subject = $1 ORDER BY created_at DESC, id DESC LIMIT 1)`,
        [key],
      );
    }
  }

  /**
   * Counts a sign-up from this address, before it is tried, both as an account created and as a
   * "taken" answer; `settleSignUp` keeps the one that happened. Not granted: the seconds to wait and the
   * limit reached, nothing recorded.
   */
  async reserveSignUp(ip: string): Promise<SignUpReservation> {
    const quotas = [
      { subject: subject('signup', ip), limit: SIGN_UP_LIMIT.perAddress, windowMs: SIGN_UP_LIMIT.windowMs },
      { subject: subject('signup-failed', ip), limit: SIGN_UP_LIMIT.failedPerAddress, windowMs: SIGN_UP_LIMIT.windowMs },
    ];
    const { retryAfterSeconds, blockedBy, rows } = await this.reserve(quotas);
    if (retryAfterSeconds > 0) {
      const limit = blockedBy === quotas[0] ? 'accounts' : 'failures';
      this.metrics.throttled(limit === 'accounts' ? 'sign_up_accounts' : 'sign_up_failures');
      return { granted: false, retryAfterSeconds, limit };
    }
    return { granted: true, accountRow: rows[0]!, failureRow: rows[1]! };
  }

  /**
   * Runs the sign-up a reservation was for and keeps the count its outcome calls for: an account
   * created, a refusal as taken, or neither (any other refusal or error).
   */
  async settleSignUp<T>(reservation: Extract<SignUpReservation, { granted: true }>, signUp: () => Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await signUp();
    } catch (err) {
      const taken = err instanceof UserError && (err.code === 'USERNAME_TAKEN' || err.code === 'EMAIL_TAKEN');
      await this.attempts.delete(taken ? [reservation.accountRow] : [reservation.accountRow, reservation.failureRow]);
      throw err;
    }
    await this.attempts.delete([reservation.failureRow]);
    return result;
  }

  /**
   * 0 when a link may be mailed under every one of these limits (`LINK_MAIL_LIMITS`, per subject and
   * value), in which case it is counted; otherwise the seconds to wait, the subject that refused, and
   * nothing counted.
   */
  async reserveLinkMail(
    subjects: { kind: LinkMailSubject; value: string }[],
  ): Promise<{ retryAfterSeconds: number; refusedBy?: LinkMailSubject }> {
    const quotas = subjects.map(({ kind, value }) => ({
      kind,
      subject: subject(kind, value),
      limit: LINK_MAIL_LIMITS[kind],
      windowMs: LINK_MAIL_LIMITS.windowMs,
    }));
    const { retryAfterSeconds, blockedBy } = await this.reserve(quotas);
    if (retryAfterSeconds === 0) return { retryAfterSeconds };
    this.metrics.throttled('link_mail');
    return { retryAfterSeconds, refusedBy: quotas.find((q) => q.subject === blockedBy?.subject)?.kind };
  }

  async purgeExpired(): Promise<number> {
    const now = this.clock.now().getTime();
    return purgeInBatches(
      (text, values) => this.attempts.query(text, values),
      'counted_attempts',
      `((t.subject ~ '^(signup|reset-|verify-)' AND t.created_at <= $1) OR (t.subject !~ '^(signup|reset-|verify-)' AND t.created_at <= $2))`,
      [new Date(now - SIGN_UP_LIMIT.windowMs), new Date(now - WINDOW_MS)],
    );
  }

  /**
   * Records one row per quota if every quota is under its limit, else the longest wait. Locks are taken
   * in key order, the same on every instance, so two reservations never wait on each other in a cycle.
   */
  private async reserve(quotas: Quota[]): Promise<{ retryAfterSeconds: number; blockedBy?: Quota; rows: string[] }> {
    const now = this.clock.now();
    const keys = [...new Set(quotas.map((q) => lockKey(q.subject)))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return this.dataSource.transaction(async (manager) => {
      for (const key of keys) await manager.query('SELECT pg_advisory_xact_lock($1::bigint)', [key.toString()]);
      let longest: { retryAfterSeconds: number; blockedBy?: Quota } = { retryAfterSeconds: 0 };
      for (const quota of quotas) {
        const wait = await this.waitFor(manager, quota, now.getTime());
        if (wait > longest.retryAfterSeconds) longest = { retryAfterSeconds: wait, blockedBy: quota };
      }
      if (longest.retryAfterSeconds > 0) return { ...longest, rows: [] };
      const inserted = await manager.insert(
        CountedAttemptEntity,
        quotas.map((q) => ({ subject: q.subject, createdAt: now })),
      );
      return { retryAfterSeconds: 0, rows: inserted.identifiers.map((row) => String(row.id)) };
    });
  }

  private async waitFor(manager: EntityManager, { subject: key, limit, windowMs }: Quota, now: number): Promise<number> {
    const recent = await manager.find(CountedAttemptEntity, {
      select: { createdAt: true },
      where: { subject: key, createdAt: MoreThan(new Date(now - windowMs)) },
      order: { createdAt: 'DESC' },
      take: limit,
    });
    if (recent.length < limit) return 0;
    // The attempt is allowed again once the oldest of the last `limit` rows leaves the window.
    const oldest = recent[recent.length - 1]!.createdAt.getTime();
    return Math.max(1, Math.ceil((oldest + windowMs - now) / 1000));
  }
}
