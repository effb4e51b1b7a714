import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { createHash } from 'node:crypto';
import { MoreThan, Repository } from 'typeorm';
import { Clock } from '../clock/clock.js';
import { SignInFailureEntity } from './sign-in-failure.entity.js';

const WINDOW_MS = 15 * 60_000;
/** Failed attempts allowed in the window: per account (login), and per client address. */
export const SIGN_IN_LIMITS = { login: 10, ip: 50 } as const;
/** Accounts one client address may create in an hour. */
export const SIGN_UP_LIMIT = { perAddress: 10, windowMs: 60 * 60_000 } as const;

function subject(kind: 'login' | 'ip' | 'signup', value: string): string {
  return `${kind}:${createHash('sha256').update(value.trim().toLowerCase()).digest('hex')}`;
}

/**
 * Throttles password guessing: too many failures for one account, or from one address, within 15
 * minutes make further attempts wait (HTTP 429 with Retry-After). Also slows mass sign-ups: 10 new
 * accounts per address and hour. Kept in the database so every instance sees the same counts.
 */
@Injectable()
export class SignInThrottle {
  constructor(
    @InjectRepository(SignInFailureEntity) private readonly failures: Repository<SignInFailureEntity>,
    private readonly clock: Clock,
  ) {}

  /** Seconds to wait before another attempt, or 0 when one is allowed now. */
  async retryAfterSeconds(login: string, ip: string): Promise<number> {
    const now = this.clock.now().getTime();
    const waits = await Promise.all([
      this.waitFor(subject('login', login), SIGN_IN_LIMITS.login, now),
      this.waitFor(subject('ip', ip), SIGN_IN_LIMITS.ip, now),
    ]);
    return Math.max(...waits);
  }

  async recordFailure(login: string, ip: string): Promise<void> {
    const createdAt = this.clock.now();
    await this.failures.insert([
      { subject: subject('login', login), createdAt },
      { subject: subject('ip', ip), createdAt },
    ]);
  }

  /** A successful sign-in forgives the account's earlier failures (not the address's). */
  async recordSuccess(login: string): Promise<void> {
    await this.failures.delete({ subject: subject('login', login) });
  }

  /** Seconds before this address may create another account, or 0. */
  async signUpRetryAfterSeconds(ip: string): Promise<number> {
    return this.waitFor(subject('signup', ip), SIGN_UP_LIMIT.perAddress, this.clock.now().getTime(), SIGN_UP_LIMIT.windowMs);
  }

  async recordSignUp(ip: string): Promise<void> {
    await this.failures.insert({ subject: subject('signup', ip), createdAt: this.clock.now() });
  }

  async purgeExpired(): Promise<number> {
    const now = this.clock.now().getTime();
    const result = await this.failures
      .createQueryBuilder()
      .delete()
      .where(`(subject LIKE 'signup:%' AND created_at <= :signUps) OR (subject NOT LIKE 'signup:%' AND created_at <= :failures)`, {
        signUps: new Date(now - SIGN_UP_LIMIT.windowMs),
        failures: new Date(now - WINDOW_MS),
      })
      .execute();
    return result.affected ?? 0;
  }

  private async waitFor(key: string, limit: number, now: number, windowMs = WINDOW_MS): Promise<number> {
    const recent = await this.failures.find({
      select: { createdAt: true },
      where: { subject: key, createdAt: MoreThan(new Date(now - windowMs)) },
      order: { createdAt: 'DESC' },
      take: limit,
    });
    if (recent.length < limit) return 0;
    // The attempt is allowed again once the oldest of the last `limit` failures leaves the window.
    const oldest = recent[recent.length - 1]!.createdAt.getTime();
    return Math.max(1, Math.ceil((oldest + windowMs - now) / 1000));
  }
}
