import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { Clock } from '../clock/clock.js';
import { jobKind } from '../jobs/job-kind.js';
import { JobQueue } from '../jobs/job-queue.js';

/**
 * What a security notice says: something happened to the account that its owner must hear about even when
 * they did it themselves (GitHub and GitLab send the same list). Each notice carries only what the mail
 * shows; the sender reads the user's name and address when it sends.
 */
export type SecurityNotice =
  /** A sign-in from a browser this account was not used in before. */
  | { kind: 'new-browser'; browser: string; ip: string; at: string }
  | { kind: 'password-changed' }
  /** The password was reset through the e-mailed link (every other session ended). */
  | { kind: 'password-reset' }
  /** Sent to the old address: `to` names it. */
  | { kind: 'email-changed'; newEmail: string }
  | { kind: 'second-factor-enabled'; method: 'totp' | 'passkey'; name?: string }
  | { kind: 'second-factor-disabled'; method: 'totp' | 'passkey'; name?: string }
  | { kind: 'recovery-code-used'; remaining: number }
  | { kind: 'recovery-codes-regenerated' }
  /** An operator reset the second factor (`users:reset-second-factor`). */
  | { kind: 'second-factor-reset' }
  | { kind: 'personal-token-created'; name: string; scopes: string[] }
  /** `resourceServers`: those the approval added (RFC 8707), as `Name (identifier)`. */
  | { kind: 'application-authorized'; application: string; scopes: string[]; resourceServers?: string[] }
  /** Told to an organizer's owners and admins: a service account was made for it, or deleted (`by`: who did it). */
  | { kind: 'service-account-created'; organizer: string; name: string; scopes: string[]; by: string }
  | { kind: 'service-account-deleted'; organizer: string; name: string; by: string };

export type SecurityNoticeKind = SecurityNotice['kind'];

/** One notice to one user: the job's data. `to` overrides the user's current address (the old one, on a change). */
export interface SecurityNoticeJob {
  userId: string;
  notice: SecurityNotice;
  to?: string;
  /** When it happened (ISO 8601): the mail says so even when it goes out later (a retry). */
  at?: string;
}

/** The job kind of security notices: one mail each, bounded like every mail (SMTP_SEND_LIMIT_MS 25 s < 30 s). */
export const SECURITY_NOTICES = jobKind<SecurityNoticeJob>('security-notices', {
  expireInSeconds: 30,
  label: (job) => `security-notice.${job.notice.kind}`,
});

/**
 * Tells a user by e-mail what happened to their account (docs/account-security.md, "Security notices").
 * Enqueued in the transaction of the change when there is one (`tx`): a change rolled back tells no one,
 * a committed one is told even if the process dies next. The mail itself is sent by the account-mail
 * module's handler.
 */
@Injectable()
export class SecurityNotices {
  constructor(
    private readonly jobs: JobQueue,
    private readonly clock: Clock,
  ) {
    jobs.declare(SECURITY_NOTICES);
  }

  async notify(userId: string, notice: SecurityNotice, options: { tx?: EntityManager; to?: string } = {}): Promise<void> {
    const job: SecurityNoticeJob = { userId, notice, ...(options.to ? { to: options.to } : {}), at: this.clock.now().toISOString() };
    await this.jobs.enqueue(SECURITY_NOTICES, job, { tx: options.tx });
  }
}
