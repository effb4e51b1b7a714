import type { DataSource } from 'typeorm';
import { Browser, formFields } from './browser.js';
import { waitUntil } from './mail-flows.js';
import type { TestSmtpServer } from './smtp-server.js';

/** The mails that arrived for `email` whose subject matches. */
export function mailsTo(smtp: TestSmtpServer, email: string, subject: RegExp) {
  return smtp.arrivals.filter((a) => a.to.includes(email) && subject.test(a.mail.subject ?? '')).map((a) => a.mail);
}

/**
 * Waits for the `n`th mail to `email` with a link to `path` (`/verify-email` or `/reset-password`), and
 * answers the link as a local path with its query (`/verify-email?token=…`).
 */
export async function mailedLink(smtp: TestSmtpServer, email: string, path: string, n = 1): Promise<string> {
  const links = () => linksIn(smtp, email, path);
  await waitUntil(
    () => links().length >= n,
    20_000,
    () => `${links().length} mail(s) with a ${path} link to ${email}`,
  );
  return links()[n - 1]!;
}

/** The links to `path` mailed to `email` so far, in the order they arrived. */
export function linksIn(smtp: TestSmtpServer, email: string, path: string): string[] {
  const pattern = new RegExp(`https?://[^/\\s]+(${path}\\?token=[A-Za-z0-9_-]{65})`);
  return smtp.arrivals
    .filter((a) => a.to.includes(email))
    .map((a) => a.mail.text?.match(pattern)?.[1])
    .filter((link): link is string => !!link);
}

/** Opens a mailed link's page and presses its button (or submits its form with `extra` fields). */
export async function followLink(browser: Browser, link: string, extra: Record<string, string> = {}): Promise<Response> {
  const page = await browser.get(link);
  if (page.status !== 200) return page;
  const action = new URL(link, 'http://x').pathname;
  return browser.post(action, { ...formFields(await page.text()), ...extra });
}

/** The security-notices jobs enqueued for a user (no handler runs them in this branch): their data. */
export async function securityNoticeJobs(
  db: DataSource,
  userId: string,
): Promise<{ notice: { kind: string; newEmail?: string }; to?: string }[]> {
  const rows = (await db.query(`SELECT data FROM pgboss.job WHERE name = 'security-notices' AND data->>'userId' = $1 ORDER BY created_on`, [
    userId,
  ])) as { data: { notice: { kind: string; newEmail?: string }; to?: string } }[];
  return rows.map((row) => row.data);
}
