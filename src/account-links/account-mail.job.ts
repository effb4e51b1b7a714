import { jobKind } from '../jobs/job-kind.js';

/**
 * One mail about an account: a link (by id only: the sender computes its token, so the job's row, readable
 * by anyone with database access, is not enough to use it), or the note to an address's owner that someone
 * tried to sign up with it.
 */
export type AccountMailJob =
  | { kind: 'link'; linkId: string }
  | { kind: 'sign-up-attempt'; userId: string }
  /** A password reset asked for this typed address: the job looks it up, so the request takes the same time either way. */
  | { kind: 'reset-request'; email: string };

/** Bounded like every mail (SMTP_SEND_LIMIT_MS 25 s < 30 s). */
export const ACCOUNT_MAIL = jobKind<AccountMailJob>('account-mail', {
  expireInSeconds: 30,
  label: (job) => `account-mail.${job.kind}`,
});
