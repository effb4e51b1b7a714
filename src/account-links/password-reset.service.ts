import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { JobQueue } from '../jobs/job-queue.js';
import { SecurityNotices } from '../security-notices/security-notices.js';
import { SessionsService } from '../sessions/sessions.service.js';
import { AttemptThrottle } from '../sessions/attempt-throttle.js';
import { validateEmail } from '../users/user-validation.js';
import { UsersService } from '../users/users.service.js';
import { SecondFactorReset } from '../users/second-factor-reset.js';
import { GrantsService } from '../oauth/consent/grants.service.js';
import { AccountLinks } from './account-links.service.js';
import { ACCOUNT_MAIL } from './account-mail.job.js';

export type ResetOutcome =
  { state: 'reset'; userId: string; sessionsEnded: number; claimed: boolean } | { state: 'invalid' | 'used' | 'expired' | 'stale' };

/**
 * Password reset by e-mail (docs/account-security.md, "Password reset"). Asking for a link answers the
 * same whether or not the address has an account, in the same time: the request only counts itself
 * against its limits and enqueues a job; the job looks the address up and, if an account has it, mails
 * the link (at most a few an hour per account). The link works for an hour, once; using it ends every
 * session of the account and every other reset link, and tells the user.
 */
@Injectable()
export class PasswordReset {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly users: UsersService,
    private readonly links: AccountLinks,
    private readonly throttle: AttemptThrottle,
    private readonly jobs: JobQueue,
    private readonly sessions: SessionsService,
    private readonly notices: SecurityNotices,
    private readonly secondFactors: SecondFactorReset,
    private readonly grants: GrantsService,
  ) {}

  /**
   * Asks for a link for the account with this address, if there is one. INVALID_EMAIL on `email` for
   * something that is no address; 0, or the seconds to wait when the typed address or the client's
   * network asked too often (the same for known and unknown addresses).
   */
  async request(email: string, ip: string): Promise<number> {
    const typed = email.trim();
    validateEmail(typed);
    const { retryAfterSeconds } = await this.throttle.reserveLinkMail([
      { kind: 'reset-email', value: typed },
      { kind: 'reset-ip', value: ip },
    ]);
    if (retryAfterSeconds > 0) return retryAfterSeconds;
    await this.jobs.enqueue(ACCOUNT_MAIL, { kind: 'reset-request', email: typed });
    return 0;
  }

  /** The job's half of `request`: a link for the active account with this address, within its hourly limit. */
  async mailLink(email: string): Promise<void> {
    const user = await this.users.findByEmail(email);
    if (!user || user.state !== 'active') return;
    const { retryAfterSeconds } = await this.throttle.reserveLinkMail([{ kind: 'reset-user', value: user.id }]);
    if (retryAfterSeconds > 0) return;
    await this.dataSource.transaction((tx) => this.links.issue(tx, user.id, 'reset-password', user.email));
  }

  /** What a link is worth, without using it (the page with the form). */
  async look(token: string): Promise<'valid' | 'invalid' | 'used' | 'expired'> {
    return (await this.links.look(token, ['reset-password'])).state;
  }

  /**
   * Sets the new password (the sign-up rules: WEAK_PASSWORD on `password`, and the link stays unused)
   * and uses the link; with it every session of the account ends, the browser's that reset included, and
   * every sign-in waiting for its second step, and the user is told (`password-reset`).
   */
  async reset(token: string, password: string): Promise<ResetOutcome> {
    const outcome = await this.dataSource.transaction(async (tx): Promise<ResetOutcome> => {
      const found = await this.links.redeem(tx, token, ['reset-password']);
      if (found.state !== 'valid') return { state: found.state };
      const { link } = found;
      const user = await this.users.findById(link.userId, tx);
      if (!user || user.state !== 'active' || user.email.toLowerCase() !== link.email.toLowerCase()) return { state: 'stale' };
      // An account whose address was never verified may have been made by someone else with the owner's
      // address: the reset proves the address, so whatever that someone set up (a second factor, approvals
      // of applications) goes with their password, or they could still get in.
      const claimed = !user.emailVerified;
      await this.users.resetPassword(tx, link.userId, password);
      await this.links.endAll(tx, link.userId, ['reset-password']);
      if (claimed) await this.secondFactors.removeAllIn(tx, link.userId);
      const sessionsEnded = await this.sessions.endAllFor(link.userId, { tx });
      await this.notices.notify(link.userId, { kind: 'password-reset' }, { tx });
      return { state: 'reset', userId: link.userId, sessionsEnded, claimed };
    });
    if (outcome.state !== 'reset') return outcome;
    if (outcome.claimed) {
      for (const application of await this.grants.listForUser(outcome.userId))
        await this.grants.revoke(outcome.userId, application.applicationId);
    }
    await this.users.forgetCredentials(outcome.userId);
    return outcome;
  }
}
