import type { RenderedMail } from '../outgoing-mail.js';
import { en, type MailTexts } from '../texts.en.js';
import { webhookEn, type WebhookMailTexts } from '../webhook-texts.en.js';
import { renderHtml } from './html-layout.js';
import type { MailBody } from './mail-body.js';
import type { Recipient } from './mail-message.js';
import { renderText } from './text-layout.js';

/** An endpoint the service disabled after it failed for days, told to one of the people who manage it. */
export interface WebhookDisabledMail {
  recipient: Recipient;
  /** Whose endpoint it is, in words: the organizer's or the application's name. */
  owner: string;
  url: string;
  description: string;
  reason: string;
  disabledAt: Date;
  /** The endpoint's page in the dashboard. */
  endpointPage: string;
}

/** The mail in the layout of every Agora mail: a text and an HTML part saying the same, no attachment. */
export function renderWebhookDisabledMail(
  mail: WebhookDisabledMail,
  t: WebhookMailTexts = webhookEn,
  layout: MailTexts = en,
): RenderedMail {
  const m = t.disabled;
  const body: MailBody = {
    subject: m.subject(mail.url),
    preheader: m.intro(mail.owner),
    heading: m.heading,
    greeting: layout.greeting(mail.recipient.name),
    paragraphs: [m.intro(mail.owner), m.body],
    changes: [],
    details: [
      { label: t.labels.url, value: mail.url },
      ...(mail.description ? [{ label: t.labels.description, value: mail.description }] : []),
      { label: t.labels.reason, value: mail.reason },
      { label: t.labels.when, value: t.when(mail.disabledAt) },
    ],
    notes: [],
    tickets: [],
    action: { label: m.action, url: mail.endpointPage },
    links: [],
    footer: t.footer,
  };
  return { subject: body.subject, text: renderText(body, layout), html: renderHtml(body, layout), attachments: [], headers: {} };
}
