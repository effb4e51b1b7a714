import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { join } from 'node:path';
import { AppConfig, type MailAddress } from '../config/config.schema.js';
import { APP_CONFIG } from '../config/config.module.js';
import { FileTransport, MailTransport, SmtpTransport } from './mail-transports.js';
import type { OutgoingMail } from './outgoing-mail.js';

/**
 * Sends e-mail: through SMTP_URL, or, without it, into `<DATA_DIR>/mail/` as .eml files (one log line
 * each). `send` resolves once the server accepted the mail (or the file is written) and throws
 * MailDeliveryError otherwise: callers are jobs, which retry.
 */
@Injectable()
export class Mailer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(Mailer.name);
  private readonly transport: MailTransport;
  private readonly from: MailAddress;

  private readonly destination: string;
  private readonly smtp: boolean;
  private readonly production: boolean;

  constructor(@Inject(APP_CONFIG) config: Pick<AppConfig, 'mail' | 'database' | 'jobs' | 'env'>) {
    this.from = config.mail.from;
    this.smtp = config.mail.smtpUrl !== undefined;
    this.production = config.env === 'production';
    // Where mail goes, said once at start-up: the SMTP server's address without its credentials.
    this.destination = config.mail.smtpUrl
      ? `through the SMTP server at ${smtpServerOf(config.mail.smtpUrl)}`
      : `written to ${join(config.database.dataDir, 'mail')} as .eml files (no SMTP_URL set; docs/mail.md)`;
    this.transport = config.mail.smtpUrl
      ? new SmtpTransport(config.mail.smtpUrl, config.jobs.concurrency)
      : new FileTransport(join(config.database.dataDir, 'mail'));
  }

  onApplicationBootstrap(): void {
    this.logger.log(`Mail from ${this.from.address} is ${this.destination}`);
    if (this.production && !this.smtp) {
      this.logger.warn('SMTP_URL is not set: mail is written to files on this machine, and nobody receives it (docs/mail.md)');
    }
  }

  async send(mail: OutgoingMail): Promise<void> {
    const written = await this.transport.deliver({
      from: this.from,
      to: mail.to,
      subject: mail.subject,
      text: mail.text,
      html: mail.html,
      attachments: mail.attachments?.map((a) => ({
        filename: a.filename,
        content: a.content,
        contentType: a.contentType,
        ...(a.cid ? { cid: a.cid, contentDisposition: 'inline' as const } : {}),
      })),
      // Automatic mail (RFC 3834): vacation responders stay quiet.
      headers: { 'Auto-Submitted': 'auto-generated', ...mail.headers },
      messageId: mail.messageId === undefined ? undefined : this.messageId(mail.messageId),
    });
    if (written) this.logger.log(`Mail to ${mail.to} "${mail.subject}" written to ${written}`);
  }

  /** After the jobs have stopped (their `beforeApplicationShutdown`): a mail still going out finishes. */
  onApplicationShutdown(): void {
    this.transport.close();
  }

  private messageId(id: string): string {
    if (id.includes('@')) return id;
    return `<${id}@${this.from.address.split('@')[1]}>`;
  }
}

/** `smtps://smtp.example.com:465`: the scheme, host and port of SMTP_URL, never its user or password. */
function smtpServerOf(url: string): string {
  const { protocol, hostname, port } = new URL(url);
  return `${protocol}//${hostname}${port ? `:${port}` : ''}`;
}
