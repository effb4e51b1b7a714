import type { RenderedMail } from '../outgoing-mail.js';
import { en, type MailTexts } from '../texts.en.js';
import { calendarFile } from './calendar-file.js';
import { composeMail } from './compose.js';
import { renderHtml } from './html-layout.js';
import type { MailMessage } from './mail-message.js';
import { renderText } from './text-layout.js';
import { ticketImage } from './ticket-images.js';

/**
 * Everything of one mail but its recipient: subject, a text and an HTML part saying the same, the
 * calendar file and the check-in QR images as attachments, and the headers.
 */
export async function renderMail(message: MailMessage, texts: MailTexts = en): Promise<RenderedMail> {
  const { body, calendar, codes } = composeMail(message, texts);
  const attachments = await Promise.all(codes.map((code, i) => ticketImage(code.ticketCode, code.cid, i + 1)));
  if (calendar) attachments.push(calendarFile(message.event, calendar.method, message.event.url ?? ''));
  const headers: Record<string, string> = {};
  // Mails a person may turn off carry their unsubscribe address: List-Unsubscribe (RFC 2369), one click (RFC 8058).
  if ('unsubscribeUrl' in message) {
    headers['List-Unsubscribe'] = `<${message.unsubscribeUrl}>`;
    headers['List-Unsubscribe-Post'] = 'List-Unsubscribe=One-Click';
  }
  return {
    subject: body.subject,
    text: renderText(body, texts),
    html: renderHtml(body, texts),
    attachments,
    headers,
  };
}
