import { accountEn, type AccountMailTexts } from '../account-texts.en.js';
import type { RenderedMail } from '../outgoing-mail.js';
import { en, type MailTexts } from '../texts.en.js';
import { renderHtml } from './html-layout.js';
import type { MailBody, MailLink } from './mail-body.js';
import type { Recipient } from './mail-message.js';
import { renderText } from './text-layout.js';

/** A mail about the account itself: a link that proves an address or resets the password, or a sign-up with a taken address. */
export type AccountMail =
  | { kind: 'verify-email' | 'change-email' | 'reset-password'; recipient: Recipient; username: string; url: string }
  | { kind: 'sign-up-attempt'; recipient: Recipient; username: string; signInUrl: string; resetUrl: string };

export type AccountMailKind = AccountMail['kind'];

/** Subject, text and HTML of an account mail, in the layout of every Agora mail (no attachment, nothing to unsubscribe from). */
export function renderAccountMail(message: AccountMail, texts: AccountMailTexts = accountEn, base: MailTexts = en): RenderedMail {
  const body = accountBody(message, texts, base);
  return { subject: body.subject, text: renderText(body, base), html: renderHtml(body, base), attachments: [], headers: {} };
}

function accountBody(message: AccountMail, t: AccountMailTexts, base: MailTexts): MailBody {
  const common = { greeting: base.greeting(message.recipient.name), changes: [], details: [], tickets: [], footer: t.footer };
  if (message.kind === 'sign-up-attempt') {
    const m = t['sign-up-attempt'];
    return {
      ...common,
      subject: m.subject,
      preheader: m.intro,
      heading: m.heading,
      paragraphs: [m.intro, m.body(message.username)],
      notes: [],
      action: { label: m.action, url: message.signInUrl },
      links: [{ label: m.reset, url: message.resetUrl }],
    };
  }
  const m = t[message.kind];
  const action: MailLink = { label: m.action, url: message.url };
  return {
    ...common,
    subject: m.subject,
    preheader: m.body,
    heading: m.heading,
    paragraphs: [m.intro(message.username), m.body],
    notes: [m.valid, t.signature],
    action,
    // The address written out as well, for mail apps that do not show the button.
    links: [{ label: t.copyLink, url: message.url }],
  };
}
