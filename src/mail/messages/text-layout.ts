import type { MailTexts } from '../texts.en.js';
import type { MailBody } from './mail-body.js';

/** The plain-text part: the same content as the HTML, links written out. */
export function renderText(body: MailBody, t: MailTexts): string {
  const blocks: string[] = [body.greeting, ...body.paragraphs];
  if (body.changes.length > 0) {
    blocks.push(body.changes.map((c) => `${c.label}\n  ${t.labels.before}: ${c.before}\n  ${t.labels.now}: ${c.after}`).join('\n'));
  }
  blocks.push(body.details.map((d) => `${d.label}: ${d.value}`).join('\n'));
  blocks.push(...body.notes);
  if (body.tickets.length > 0) {
    blocks.push(
      `${t.tickets.heading}\n${t.tickets.introText}\n${body.tickets.map((ticket) => `- ${ticket.name}: ${ticket.caption}`).join('\n')}`,
    );
  }
  blocks.push(...(body.action ? [body.action] : []).concat(body.links).map((l) => `${l.label}: ${l.url}`));
  const footer = [body.footer, ...(body.unsubscribe ? [`${body.unsubscribe.label}: ${body.unsubscribe.url}`] : [])].join('\n');
  return `${blocks.join('\n\n')}\n\n-- \n${footer}\n`;
}
