import { randomBytes } from 'node:crypto';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import type { Options as MailOptions } from 'nodemailer/lib/mailer';
import { MailDeliveryError } from './mail-delivery.error.js';

/** Where a built message goes: an SMTP server, or a file in the local mailbox directory. */
export interface MailTransport {
  /** Sends the message; resolves to where it went (a file path), or nothing. Throws MailDeliveryError. */
  deliver(message: MailOptions): Promise<string | undefined>;
  close(): void;
}

/** Bounded waits: a job never hangs on a silent server; it fails, and its retry tries again later. */
export const SMTP_TIMEOUTS = { connectionTimeout: 5_000, greetingTimeout: 5_000, socketTimeout: 15_000 } as const;

/**
 * The longest one mail may take, waiting for a connection of the pool included: less than the expiry of
 * a mail job's attempt (30 s, src/events/event-notices.ts), after which the job is taken for dead and
 * run again. A send given up here fails its job (retried later); the server may still accept it, so the
 * mail can then arrive twice, with the same Message-ID.
 */
export const SMTP_SEND_LIMIT_MS = 25_000;

export class SmtpTransport implements MailTransport {
  private readonly transporter: ReturnType<typeof nodemailer.createTransport>;
  private readonly secrets: string[];

  /** `connections`: as many as mails may be sent at once (JOBS_CONCURRENCY), so none waits for another. */
  constructor(smtpUrl: string, connections: number) {
    this.transporter = nodemailer.createTransport({ url: smtpUrl, pool: true, maxConnections: connections, ...SMTP_TIMEOUTS });
    const url = new URL(smtpUrl);
    this.secrets = [url.password, decodeURIComponent(url.password)].filter((s) => s.length >= 3);
  }

  async deliver(message: MailOptions): Promise<undefined> {
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new MailDeliveryError(`SMTP delivery failed: no answer within ${SMTP_SEND_LIMIT_MS / 1000} s`)),
        SMTP_SEND_LIMIT_MS,
      );
    });
    try {
      await Promise.race([this.transporter.sendMail(message), limit]);
    } catch (err) {
      throw err instanceof MailDeliveryError ? err : this.deliveryError(err);
    } finally {
      clearTimeout(timer);
    }
    return undefined;
  }

  close(): void {
    this.transporter.close();
  }

  /** The reply code and the server's words, or the connection problem; never the credentials. */
  private deliveryError(err: unknown): MailDeliveryError {
    const e = err as { responseCode?: number; response?: string; code?: string; message?: string };
    const detail =
      e.responseCode !== undefined
        ? `the server answered ${e.response ?? e.responseCode}`
        : `${e.code ? `${e.code}: ` : ''}${e.message ?? String(err)}`;
    let message = `SMTP delivery failed: ${detail}`.replace(/[\r\n]+/g, ' ');
    for (const secret of this.secrets) message = message.split(secret).join('***');
    return new MailDeliveryError(message, e.responseCode);
  }
}

/** The mailbox without a mail server: each message an .eml file under `<DATA_DIR>/mail/`, for its owner only. */
export class FileTransport implements MailTransport {
  private readonly builder = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  private ready?: Promise<void>;

  constructor(readonly directory: string) {}

  async deliver(message: MailOptions): Promise<string> {
    const { message: eml } = (await this.builder.sendMail(message)) as { message: Buffer };
    this.ready ??= mkdir(this.directory, { recursive: true, mode: 0o700 })
      .then(() => chmod(this.directory, 0o700))
      .catch((err: unknown) => {
        this.ready = undefined; // the next mail tries again
        throw err;
      });
    await this.ready;
    // Named by the wall clock, as the files' own times are, so that `ls` sorts them in the order they were written.
    const path = join(this.directory, fileName(new Date()));
    await writeFile(path, eml, { mode: 0o600, flag: 'wx' });
    return path;
  }

  close(): void {}
}

/** Sorts by time (UTC, to the millisecond), and unique by its random tail: `20260314T180000123Z-9f86d081.eml`. */
export function fileName(at: Date): string {
  return `${at.toISOString().replace(/[-:.]/g, '')}-${randomBytes(4).toString('hex')}.eml`;
}
