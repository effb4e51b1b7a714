import 'reflect-metadata';
import { Logger, type LoggerService } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigModule } from '../src/config/config.module.js';
import { loadConfig } from '../src/config/config.schema.js';
import { MailDeliveryError } from '../src/mail/mail-delivery.error.js';
import { MailModule } from '../src/mail/mail.module.js';
import { Mailer } from '../src/mail/mailer.js';
import { renderMail } from '../src/mail/messages/render-mail.js';
import type { OutgoingMail } from '../src/mail/outgoing-mail.js';
import { SAMPLE_MAILS } from './support/mail-samples.js';
import { SMTP_PASSWORD as PASSWORD, startSmtpServer, type Arrival } from './support/smtp-server.js';
import { simpleParser } from 'mailparser';

// The Mailer against a real SMTP server in this process (smtp-server), what arrived parsed with mailparser;
// and, without SMTP_URL, the mailbox directory.

/** The Mail module as the application wires it, its log lines captured. */
async function startMailModule(env: Record<string, string>): Promise<{ module: TestingModule; mailer: Mailer; logs: string[] }> {
  const logs: string[] = [];
  const capture: LoggerService = {
    log: (message: unknown) => logs.push(String(message)),
    error: (message: unknown) => logs.push(String(message)),
    warn: (message: unknown) => logs.push(String(message)),
  };
  const module = await Test.createTestingModule({ imports: [ConfigModule.forRoot(loadConfig(env)), MailModule] })
    .setLogger(capture)
    .compile();
  await module.init();
  return { module, mailer: module.get(Mailer), logs };
}

const plain: OutgoingMail = { to: 'ann@example.com', subject: 'Hello', text: 'Hello Ann', html: '<p>Hello Ann</p>' };

describe('Mailer through SMTP_URL', () => {
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  afterEach(async () => smtp?.close());

  it('sends a rendered confirmation: recipient, sender, subject, text and HTML parts, QR images inline and the calendar file', async () => {
    smtp = await startSmtpServer();
    const { module, mailer, logs } = await startMailModule({ SMTP_URL: smtp.url, MAIL_FROM: 'Agora Events <events@agora.example.com>' });
    try {
      const rendered = await renderMail(SAMPLE_MAILS.find((m) => m.kind === 'registration.confirmed')!);
      await mailer.send({ ...rendered, to: 'katherine.johnson@flight-research.example.com', messageId: 'job-7f3c2a10' });
      // Start-up says where mail goes, without the SMTP password.
      expect(logs).toContain(`Mail from events@agora.example.com is through the SMTP server at smtp://127.0.0.1:${smtp.port}`);
      expect(logs.join('\n')).not.toContain(PASSWORD);

      expect(smtp.arrivals).toHaveLength(1);
      const [{ from, to, user, mail }] = smtp.arrivals as [Arrival];
      expect(user).toBe('agora');
      expect(from).toBe('events@agora.example.com');
      expect(to).toEqual(['katherine.johnson@flight-research.example.com']);
      expect(mail.from?.value).toEqual([{ name: 'Agora Events', address: 'events@agora.example.com' }]);
      expect(mail.subject).toBe(rendered.subject);
      expect(mail.messageId).toBe('<job-7f3c2a10@agora.example.com>');
      expect(mail.headers.get('auto-submitted')).toBe('auto-generated');
      expect(mail.text).toContain('Your registration for Community Hack Night');
      expect(mail.html).toContain('<h1');
      const images = mail.attachments.filter((a) => a.contentType === 'image/png');
      expect(images.map((a) => a.cid)).toEqual(['check-in-1@agora', 'check-in-2@agora']);
      for (const image of images) expect(mail.html).toContain(`cid:${image.cid}`);
      const ics = mail.attachments.find((a) => a.filename === 'event.ics')!;
      expect(ics.contentType).toBe('text/calendar');
      expect(ics.headers.get('content-type')).toMatchObject({ params: { method: 'PUBLISH', charset: 'utf-8' } });
      expect(ics.content.toString()).toContain('DTSTART;TZID=Europe/Berlin:20260314T190000');
      expect(logs.join('\n')).not.toContain(PASSWORD);
    } finally {
      await module.close();
    }
  });

  it('carries List-Unsubscribe and one-click on a reminder', async () => {
    smtp = await startSmtpServer();
    const mailer = new Mailer(loadConfig({ SMTP_URL: smtp.url }));
    try {
      const reminder = SAMPLE_MAILS.find((m) => m.kind === 'event.reminder')!;
      await mailer.send({ ...(await renderMail({ ...reminder, attendees: [] })), to: 'ann@example.com' });
      const { mail } = smtp.arrivals[0]!;
      // As a mail provider reads them: unfolded header lines.
      const lines = mail.headerLines.map((h) => h.line.replace(/\r\n\s+/g, ' '));
      expect(lines).toContain(
        'List-Unsubscribe: <https://agora.example.com/mail/unsubscribe?token=agora_unsub_9f86d081884c7d659a2feaa0c55ad015>',
      );
      expect(lines).toContain('List-Unsubscribe-Post: List-Unsubscribe=One-Click');
    } finally {
      mailer.onApplicationShutdown();
    }
  });

  it('throws on a temporary refusal (451) so the job retries, and the retry goes out with the same Message-ID', async () => {
    smtp = await startSmtpServer([{ code: 451, message: '4.3.0 Try again later' }]);
    const mailer = new Mailer(loadConfig({ SMTP_URL: smtp.url, MAIL_FROM: 'agora@agora.example.com' }));
    try {
      const mail = { ...plain, messageId: 'job-42' };
      const failure = await mailer.send(mail).catch((err: unknown) => err);
      expect(failure).toBeInstanceOf(MailDeliveryError);
      expect(failure).toMatchObject({ responseCode: 451, permanent: false, message: expect.stringContaining('451') });
      await mailer.send(mail);
      expect(smtp.tries()).toBe(2);
      expect(smtp.arrivals.map((a) => a.mail.messageId)).toEqual(['<job-42@agora.example.com>']);
    } finally {
      mailer.onApplicationShutdown();
    }
  });

  it('throws on a permanent refusal (550) with the code in the message and never the password', async () => {
    smtp = await startSmtpServer([{ code: 550, message: '5.1.1 Mailbox unavailable' }]);
    const mailer = new Mailer(loadConfig({ SMTP_URL: smtp.url }));
    try {
      const failure = (await mailer.send(plain).catch((err: unknown) => err)) as MailDeliveryError;
      expect(failure).toBeInstanceOf(MailDeliveryError);
      expect(failure.message).toMatch(/550/);
      expect(failure.message).toContain('Mailbox unavailable');
      expect(failure).toMatchObject({ responseCode: 550, permanent: true });
      expect(`${failure.message}\n${failure.stack}`).not.toContain(PASSWORD);
    } finally {
      mailer.onApplicationShutdown();
    }
  });

  it('throws, without the password, when the server refuses the login', async () => {
    smtp = await startSmtpServer();
    const wrong = smtp.url.replace(PASSWORD, 'not-the-password-at-all');
    const mailer = new Mailer(loadConfig({ SMTP_URL: wrong }));
    try {
      const failure = (await mailer.send(plain).catch((err: unknown) => err)) as MailDeliveryError;
      expect(failure).toMatchObject({ responseCode: 535 });
      expect(failure.message).not.toContain('not-the-password-at-all');
    } finally {
      mailer.onApplicationShutdown();
    }
  });

  it('throws when no server listens', async () => {
    smtp = await startSmtpServer();
    const url = smtp.url;
    await smtp.close();
    const mailer = new Mailer(loadConfig({ SMTP_URL: url }));
    try {
      await expect(mailer.send(plain)).rejects.toThrow(/SMTP delivery failed: .*ECONNREFUSED/);
    } finally {
      mailer.onApplicationShutdown();
      smtp = await startSmtpServer(); // for afterEach
    }
  });
});

describe('Mailer without SMTP_URL', () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'agora-mail-'));
  });
  afterEach(async () => rm(dataDir, { recursive: true, force: true }));

  it('writes each mail as an .eml file under DATA_DIR/mail, for its owner only, and logs one line naming it', async () => {
    const { module, mailer, logs } = await startMailModule({ DATA_DIR: dataDir, BASE_URL: 'https://agora.example.com' });
    try {
      const rendered = await renderMail(SAMPLE_MAILS.find((m) => m.kind === 'registration.waitlisted')!);
      await mailer.send({ ...rendered, to: 'ann@example.com', messageId: 'job-1' });
      await mailer.send({ ...plain, subject: 'Second' });

      const directory = join(dataDir, 'mail');
      expect((await stat(directory)).mode & 0o777).toBe(0o700);
      const files = (await readdir(directory)).sort();
      expect(files).toHaveLength(2);
      for (const file of files) {
        expect(file).toMatch(/^\d{8}T\d{9}Z-[0-9a-f]{8}\.eml$/);
        expect((await stat(join(directory, file))).mode & 0o777).toBe(0o600);
      }
      const first = await simpleParser(await readFile(join(directory, files[0]!)));
      expect(first.subject).toBe(rendered.subject);
      expect(first.to).toMatchObject({ value: [{ address: 'ann@example.com' }] });
      expect(first.from?.value).toEqual([{ name: 'Agora', address: 'agora@agora.example.com' }]);
      expect(first.messageId).toBe('<job-1@agora.example.com>');
      expect(first.text).toContain('you are on its waitlist');
      expect(first.html).toContain('<h1');
      const second = await simpleParser(await readFile(join(directory, files[1]!)));
      expect(second.subject).toBe('Second');

      expect(logs.filter((line) => line.includes('.eml'))).toEqual([
        `Mail from agora@agora.example.com is written to ${directory} as .eml files (no SMTP_URL set; docs/mail.md)`,
        `Mail to ann@example.com "${rendered.subject}" written to ${join(directory, files[0]!)}`,
        `Mail to ann@example.com "Second" written to ${join(directory, files[1]!)}`,
      ]);
    } finally {
      await module.close();
    }
  });
});

afterAll(() => {
  Logger.overrideLogger(false);
});
