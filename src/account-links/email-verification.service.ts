import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { SecurityNotices } from '../security-notices/security-notices.js';
import { AttemptThrottle } from '../sessions/attempt-throttle.js';
import { UserError } from '../users/users.errors.js';
import { UsersService } from '../users/users.service.js';
import { AccountLinks } from './account-links.service.js';

/** What following a verification or change-of-address link did, or why it did nothing. */
export type VerificationOutcome =
  | { state: 'verified'; userId: string }
  | { state: 'changed'; userId: string; email: string }
  /** Unknown, forged, used or replaced by a newer link, expired. */
  | { state: 'invalid' | 'used' | 'expired' }
  /** The account's address is no longer the one the link was mailed to. */
  | { state: 'stale' }
  /** Another account took the new address meanwhile. */
  | { state: 'taken' };

/** Mailing again: done, or how long to wait (429). */
export type MailOutcome = { sent: true; email: string } | { sent: false; retryAfterSeconds: number };

/**
 * Proving an e-mail address: the link mailed at sign-up (and again on request), and a change of address,
 * which takes effect only once the new address followed its link, and is then told to the old one.
 */
@Injectable()
export class EmailVerification {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly users: UsersService,
    private readonly links: AccountLinks,
    private readonly throttle: AttemptThrottle,
    private readonly notices: SecurityNotices,
  ) {}

  /**
   * Mails the user's address a new verification link (the older ones stop working), within the limits
   * per account and per address; nothing when the address is verified already.
   */
  async resend(userId: string): Promise<MailOutcome | { sent: false; verified: true }> {
    const user = await this.users.findById(userId);
    if (!user) throw new UserError('USER_NOT_FOUND', 'No such user');
    if (user.emailVerified) return { sent: false, verified: true };
    const wait = await this.throttle.reserveLinkMail([
      { kind: 'verify-user', value: user.id },
      { kind: 'verify-email', value: user.email },
    ]);
    if (wait.retryAfterSeconds > 0) return { sent: false, retryAfterSeconds: wait.retryAfterSeconds };
    await this.dataSource.transaction((tx) => this.links.issue(tx, user.id, 'verify-email', user.email));
    return { sent: true, email: user.email };
  }

  /**
   * Starts a change of address: checks it (current password, a valid address that is not another
   * account's) and mails a link to the new address; the account keeps the old one until the link is
   * followed. A new change replaces a pending one. Links mailed and addresses refused as taken share the
   * account's hourly quota (`verify-user`): past it, the seconds to wait instead of either.
   */
  async requestChange(userId: string, input: { currentPassword: string; email: string }): Promise<MailOutcome> {
    let email: string;
    try {
      ({ email } = await this.users.checkEmailChange(userId, input));
    } catch (err) {
      if (!(err instanceof UserError && err.code === 'EMAIL_TAKEN')) throw err;
      // "Already used by another account" tells whether an address has an account: each such answer counts
      // against the account's hourly link quota, as a mailed link does, so probing is bounded like sending.
      const wait = await this.throttle.reserveLinkMail([{ kind: 'verify-user', value: userId }]);
      if (wait.retryAfterSeconds > 0) return { sent: false, retryAfterSeconds: wait.retryAfterSeconds };
      throw err;
    }
    const wait = await this.throttle.reserveLinkMail([
      { kind: 'verify-user', value: userId },
      { kind: 'verify-email', value: email },
    ]);
    if (wait.retryAfterSeconds > 0) return { sent: false, retryAfterSeconds: wait.retryAfterSeconds };
    await this.dataSource.transaction((tx) => this.links.issue(tx, userId, 'change-email', email));
    return { sent: true, email };
  }

  /**
   * An operator sets the address (`users:set-email`): trusted, verified at once (UsersService.setEmail).
   * Every link mailed before ends (a pending change must not undo this one, a reset must not reach the old
   * address), and the old address is told.
   */
  async setByOperator(username: string, email: string): Promise<{ id: string; username: string; email: string }> {
    const user = await this.users.setEmail(username, email);
    await this.dataSource.transaction(async (tx) => {
      await this.links.endAll(tx, user.id, ['verify-email', 'change-email', 'reset-password']);
      if (user.oldEmail.toLowerCase() !== user.email.toLowerCase()) {
        await this.notices.notify(user.id, { kind: 'email-changed', newEmail: user.email }, { tx, to: user.oldEmail });
      }
    });
    return { id: user.id, username: user.username, email: user.email };
  }

  /** The change waiting for its link, if any (the security page shows it). */
  pendingChange(userId: string): Promise<{ email: string; expiresAt: Date } | null> {
    return this.links.pendingChange(userId);
  }

  /**
   * Follows a link: the address is verified, or the new address becomes the account's (verified), every
   * other link of the account ends (a reset mailed to the old address must not work), and the old
   * address is told. Once: a second use is `used`.
   */
  async follow(token: string): Promise<VerificationOutcome> {
    let outcome: VerificationOutcome;
    try {
      outcome = await this.dataSource.transaction(async (tx): Promise<VerificationOutcome> => {
        const found = await this.links.redeem(tx, token, ['verify-email', 'change-email']);
        if (found.state !== 'valid') return { state: found.state };
        const { link } = found;
        if (link.purpose === 'verify-email') {
          const verified = await this.users.markEmailVerified(tx, link.userId, link.email);
          return verified ? { state: 'verified', userId: link.userId } : { state: 'stale' };
        }
        const switched = await this.users.switchEmail(tx, link.userId, link.email);
        if (!switched) return { state: 'stale' };
        await this.links.endAll(tx, link.userId, ['verify-email', 'change-email', 'reset-password']);
        await this.notices.notify(link.userId, { kind: 'email-changed', newEmail: link.email }, { tx, to: switched.oldEmail });
        return { state: 'changed', userId: link.userId, email: link.email };
      });
    } catch (err) {
      if (err instanceof UserError && err.code === 'EMAIL_TAKEN') return { state: 'taken' };
      throw err;
    }
    if (outcome.state === 'changed') await this.users.forgetCredentials(outcome.userId);
    return outcome;
  }

  /** What a link is worth, without using it (the page with its button). */
  async look(
    token: string,
  ): Promise<{ state: 'valid'; purpose: 'verify-email' | 'change-email'; email: string } | { state: 'invalid' | 'used' | 'expired' }> {
    const found = await this.links.look(token, ['verify-email', 'change-email']);
    if (found.state !== 'valid') return found;
    return { state: 'valid', purpose: found.link.purpose as 'verify-email' | 'change-email', email: found.link.email };
  }
}
