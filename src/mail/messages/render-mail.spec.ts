import ICAL from 'ical.js';
import { SAMPLE_EVENT, SAMPLE_MAILS } from '../../../test/support/mail-samples.js';
import type { MailAttachment, RenderedMail } from '../outgoing-mail.js';
import type { EventFacts, MailKind, MailMessage } from './mail-message.js';
import { renderMail } from './render-mail.js';

/** The sample with short check-in codes: real ones (a signed token) take a second each to encode under Jest's VM. */
function light<M extends MailMessage>(message: M): M {
  if (!('attendees' in message) || !message.attendees) return message;
  return { ...message, attendees: message.attendees.map((a, i) => ({ ...a, ticketCode: a.ticketCode && `code-${i}` })) };
}

/** The message type of a kind (registration.confirmed and .promoted share one). */
type MessageOf<K extends MailKind, M = MailMessage> = M extends { kind: infer Kinds } ? (K extends Kinds ? M : never) : never;

function sample<K extends MailKind>(kind: K, changes: Partial<MessageOf<K>> = {}): MessageOf<K> {
  const found = SAMPLE_MAILS.find((m) => m.kind === kind) as MessageOf<K>;
  return { ...light(found), ...changes };
}

function calendarOf(mail: RenderedMail): { attachment: MailAttachment; calendar: ICAL.Component; event: ICAL.Component } {
  const attachment = mail.attachments!.find((a) => a.filename.endsWith('.ics'))!;
  const calendar = new ICAL.Component(ICAL.parse(String(attachment.content)));
  return { attachment, calendar, event: calendar.getFirstSubcomponent('vevent')! };
}

const ALL = SAMPLE_MAILS.map((m) => [m.kind, light(m)] as const);

describe('renderMail', () => {
  it.each(ALL)('writes %s as a text part and an HTML part saying the same, with why the person got it', async (_kind, message) => {
    const mail = await renderMail(message);
    expect(mail.subject).toContain(SAMPLE_EVENT.title);
    for (const part of [mail.text, mail.html]) {
      expect(part).toContain('Hello Katherine Coleman Goble Johnson,');
      expect(part).toContain('because you registered for Community Hack Night');
      expect(part).toContain(message.manageUrl);
    }
    expect(mail.html).toMatch(/^<!doctype html>/);
    // Nothing remote: no stylesheet, font, script or image that is not one of the mail's own parts.
    expect(mail.html).not.toMatch(/<link|<script|@import|url\(/i);
    for (const [, src] of mail.html.matchAll(/<img[^>]* src="([^"]*)"/g)) expect(src).toMatch(/^cid:/);
  });

  it('escapes every value in the HTML part and keeps it literal in the subject and the text part', async () => {
    const title = `<script>alert("x")</script> "Tom & Jerry's"`;
    const organizerName = '<b>Org</b>';
    const mail = await renderMail(
      sample('registration.confirmed', {
        event: { ...SAMPLE_EVENT, title, organizerName, venue: '<img src=x onerror=alert(1)>' },
        recipient: { name: 'Ann "<i>" O\'Neil', email: 'ann@example.com' },
      }),
    );
    expect(mail.subject).toBe(`You're registered: ${title}`);
    expect(mail.text).toContain(title);
    expect(mail.html).not.toContain('<script>');
    expect(mail.html).not.toContain('<b>Org');
    expect(mail.html).not.toContain('<img src=x');
    expect(mail.html).not.toContain('<i>');
    expect(mail.html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &quot;Tom &amp; Jerry&#39;s&quot;');
    expect(mail.html).toContain('Ann &quot;&lt;i&gt;&quot; O&#39;Neil');
  });

  it('links only http(s) addresses: an online URL of another scheme stays text', async () => {
    const mail = await renderMail(sample('registration.waitlisted', { event: { ...SAMPLE_EVENT, onlineUrl: 'javascript:alert(1)' } }));
    expect(mail.html).toContain('javascript:alert(1)');
    expect(mail.html).not.toContain('href="javascript:');
  });

  it("shows times in the event's time zone and names the zone", async () => {
    const at = (timeZone: string) => renderMail(sample('registration.waitlisted', { event: { ...SAMPLE_EVENT, timeZone } }));
    const berlin = await at('Europe/Berlin');
    expect(berlin.text).toMatch(/When: Saturday, March 14, 2026, 7:00\s–\s10:30\sPM/);
    expect(berlin.text).toContain('Time zone: Central European Standard Time (Europe/Berlin)');
    const newYork = await at('America/New_York');
    expect(newYork.text).toMatch(/When: Saturday, March 14, 2026, 2:00\s–\s5:30\sPM/);
    expect(newYork.text).toContain('Time zone: Eastern Daylight Time (America/New_York)');
    expect(newYork.html).toContain('Eastern Daylight Time (America/New_York)');
    const tokyo = await renderMail(sample('event.reminder', { event: { ...SAMPLE_EVENT, timeZone: 'Asia/Tokyo' } }));
    expect(tokyo.subject).toMatch(/Reminder: .*, Sun, Mar 15, 3:00\sAM$/);
  });

  it('attaches a calendar file in the event’s own zone to confirmations, with a UID stable per event', async () => {
    for (const kind of ['registration.confirmed', 'registration.promoted'] as const) {
      const mail = await renderMail(sample(kind));
      const { attachment, calendar, event } = calendarOf(mail);
      expect(attachment.contentType).toBe('text/calendar; charset=utf-8; method=PUBLISH');
      expect(calendar.getFirstPropertyValue('method')).toBe('PUBLISH');
      expect(calendar.getFirstSubcomponent('vtimezone')!.getFirstPropertyValue('tzid')).toBe('Europe/Berlin');
      expect(event.getFirstPropertyValue('uid')).toBe(`event-${SAMPLE_EVENT.id}@agora.example.com`);
      expect(event.getFirstPropertyValue('sequence')).toBe(SAMPLE_EVENT.sequence);
      expect(event.getFirstPropertyValue('summary')).toBe(SAMPLE_EVENT.title);
      expect(event.getFirstPropertyValue('location')).toBe(SAMPLE_EVENT.venue);
      const start = event.getFirstProperty('dtstart')!;
      expect(start.getParameter('tzid')).toBe('Europe/Berlin');
      expect(String(start.getFirstValue())).toBe('2026-03-14T19:00:00');
      expect(String(event.getFirstPropertyValue('dtend'))).toBe('2026-03-14T22:30:00');
      // DTSTAMP is UTC, as RFC 5545 requires.
      expect((event.getFirstPropertyValue('dtstamp') as ICAL.Time).zone?.tzid).toBe('UTC');
    }
  });

  it('sends a changed event as an update of the same calendar entry, with a higher SEQUENCE', async () => {
    const confirmed = calendarOf(await renderMail(sample('registration.confirmed'))).event;
    const { calendar, event } = calendarOf(await renderMail(sample('event.changed')));
    expect(calendar.getFirstPropertyValue('method')).toBe('PUBLISH');
    expect(event.getFirstPropertyValue('uid')).toBe(confirmed.getFirstPropertyValue('uid'));
    expect(event.getFirstPropertyValue('sequence')).toBeGreaterThan(confirmed.getFirstPropertyValue('sequence') as unknown as number);
    expect(String(event.getFirstPropertyValue('dtstart'))).toBe('2026-03-21T18:00:00');
  });

  it.each(['registration.cancelled', 'event.cancelled'] as const)(
    'cancels the calendar entry with %s: METHOD:CANCEL, STATUS:CANCELLED, same UID, higher SEQUENCE',
    async (kind) => {
      const confirmed = calendarOf(await renderMail(sample('registration.confirmed'))).event;
      const { attachment, calendar, event } = calendarOf(await renderMail(sample(kind)));
      expect(attachment.contentType).toBe('text/calendar; charset=utf-8; method=CANCEL');
      expect(calendar.getFirstPropertyValue('method')).toBe('CANCEL');
      expect(event.getFirstPropertyValue('status')).toBe('CANCELLED');
      expect(event.getFirstPropertyValue('uid')).toBe(confirmed.getFirstPropertyValue('uid'));
      expect(event.getFirstPropertyValue('sequence')).toBeGreaterThan(confirmed.getFirstPropertyValue('sequence') as unknown as number);
    },
  );

  it('attaches no calendar file to a waitlist place or a reminder', async () => {
    for (const kind of ['registration.waitlisted', 'event.reminder'] as const) {
      expect((await renderMail(sample(kind))).attachments!.filter((a) => a.contentType.startsWith('text/calendar'))).toEqual([]);
    }
  });

  it('writes a zone the calendar generator does not know (Europe/Kyiv) in UTC instead of naming a zone it cannot describe', async () => {
    const event: EventFacts = { ...SAMPLE_EVENT, timeZone: 'Europe/Kyiv' };
    const mail = await renderMail(sample('registration.confirmed', { event, attendees: [] }));
    const { calendar, event: vevent } = calendarOf(mail);
    expect(calendar.getFirstSubcomponent('vtimezone')).toBeNull();
    expect(mail.text).toMatch(/When: Saturday, March 14, 2026, 8:00\s–\s11:30\sPM/);
    expect(vevent.getFirstProperty('dtstart')!.getParameter('tzid')).toBeUndefined();
    expect(vevent.getFirstPropertyValue('dtstart')!.toString()).toBe('2026-03-14T18:00:00Z');
  });

  it('shows a QR check-in code per attendee with a code, inline by cid, with alt text and the registration reference', async () => {
    const mail = await renderMail(
      sample('registration.confirmed', {
        attendees: [
          { name: 'Ada', ticketCode: 'code-for-ada' },
          { name: 'No Code', ticketCode: null },
          { name: 'Grace', ticketCode: 'code-for-grace' },
        ],
      }),
    );
    const images = mail.attachments!.filter((a) => a.cid);
    expect(images).toHaveLength(2);
    for (const image of images) {
      expect(image.contentType).toBe('image/png');
      expect(Buffer.from(image.content).subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
      expect(mail.html).toContain(`src="cid:${image.cid}"`);
    }
    expect(mail.html).toContain('alt="Check-in code for Ada, registration K7QF-93XD"');
    expect(mail.html).toContain('alt="Check-in code for Grace, registration K7QF-93XD"');
    expect(mail.html).not.toContain('Check-in code for No Code');
    expect(mail.text).toContain('- Ada: Registration K7QF-93XD');
  });

  it('shows no check-in section when no attendee has a code (an online event)', async () => {
    const mail = await renderMail(sample('registration.confirmed', { attendees: [{ name: 'Ada', ticketCode: null }] }));
    expect(mail.attachments!.filter((a) => a.cid)).toEqual([]);
    expect(mail.html).not.toContain('Check-in codes');
  });

  it('gives only non-essential mails (the reminder) List-Unsubscribe with one-click, and a visible unsubscribe link', async () => {
    for (const [, message] of ALL) {
      const mail = await renderMail(message);
      if (message.kind === 'event.reminder') {
        expect(mail.headers).toEqual({
          'List-Unsubscribe': `<${message.unsubscribeUrl}>`,
          'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
        });
        expect(mail.html).toContain(`href="${message.unsubscribeUrl}"`);
        expect(mail.text).toContain(`Stop these reminders: ${message.unsubscribeUrl}`);
      } else {
        expect(mail.headers ?? {}).toEqual({});
        expect(mail.text).not.toContain('Stop these reminders');
      }
    }
  });
});
