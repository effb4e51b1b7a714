import type { MailTexts } from '../texts.en.js';
import type { CalendarMethod } from './calendar-file.js';
import { showTime } from './event-times.js';
import type { MailBody, MailDetail, MailTicket } from './mail-body.js';
import type { AttendeeTicket, EventChange, EventFacts, MailMessage, RegistrationFacts } from './mail-message.js';

/** A mail's content, the calendar file it carries (if any) and the check-in codes to draw as QR images. */
export interface ComposedMail {
  body: MailBody;
  calendar?: { method: CalendarMethod };
  codes: { cid: string; ticketCode: string }[];
}

export function composeMail(message: MailMessage, t: MailTexts): ComposedMail {
  const { event, recipient } = message;
  const title = event.title;
  const base = {
    greeting: t.greeting(recipient.name),
    changes: [],
    notes: [] as string[],
    tickets: [] as MailTicket[],
    action: event.url ? { label: t.actions.viewEvent, url: event.url } : undefined,
    links: message.manageUrl && message.manageUrl !== event.url ? [{ label: t.actions.manage, url: message.manageUrl }] : [],
    footer: t.footer.registered(title),
  };
  switch (message.kind) {
    case 'registration.confirmed':
    case 'registration.promoted': {
      const words = t.messages[message.kind];
      const tickets = checkInCodes(message.attendees, message.registration, t);
      return {
        body: {
          ...base,
          subject: words.subject(title),
          preheader: words.intro(title),
          heading: words.heading,
          paragraphs: [words.intro(title)],
          details: [...eventDetails(event, t), ...registrationDetails(message.registration, t)],
          notes: [t.calendar.added],
          tickets: tickets.tickets,
        },
        calendar: { method: 'PUBLISH' },
        codes: tickets.codes,
      };
    }
    case 'registration.waitlisted': {
      const words = t.messages['registration.waitlisted'];
      return {
        body: {
          ...base,
          subject: words.subject(title),
          preheader: words.intro(title),
          heading: words.heading,
          paragraphs: [words.intro(title), words.next],
          details: [...eventDetails(event, t), ...registrationDetails(message.registration, t)],
        },
        codes: [],
      };
    }
    case 'registration.cancelled': {
      const words = t.messages['registration.cancelled'];
      const intro = words.intro[message.by](title, event.organizerName);
      return {
        body: {
          ...base,
          subject: words.subject(title),
          preheader: intro,
          heading: words.heading,
          paragraphs: [intro],
          details: [...eventDetails(event, t), ...registrationDetails(message.registration, t)],
          notes: [t.calendar.removed],
        },
        calendar: { method: 'CANCEL' },
        codes: [],
      };
    }
    case 'event.changed': {
      const words = t.messages['event.changed'];
      const intro = words.intro(title, event.organizerName);
      return {
        body: {
          ...base,
          subject: words.subject(title),
          preheader: intro,
          heading: words.heading,
          paragraphs: [intro],
          changes: message.changes.map((change) => describeChange(change, event, t)),
          details: eventDetails(event, t),
          notes: [t.calendar.updated, words.rest],
        },
        calendar: { method: 'PUBLISH' },
        codes: [],
      };
    }
    case 'event.cancelled': {
      const words = t.messages['event.cancelled'];
      const intro = words.intro(title, event.organizerName);
      return {
        body: {
          ...base,
          subject: words.subject(title),
          preheader: intro,
          heading: words.heading,
          paragraphs: [intro, words.registrationEnded(message.registration.reference)],
          details: [...eventDetails(event, t), ...registrationDetails(message.registration, t)],
          notes: [t.calendar.removed],
        },
        calendar: { method: 'CANCEL' },
        codes: [],
      };
    }
    case 'event.reminder': {
      const words = t.messages['event.reminder'];
      const tickets = checkInCodes(message.attendees ?? [], message.registration, t);
      const when = showTime(event.startsAt, event.endsAt, event.timeZone, t.locale);
      return {
        body: {
          ...base,
          subject: words.subject(title, when.short),
          preheader: words.intro(title),
          heading: words.heading,
          paragraphs: [words.intro(title)],
          details: [...eventDetails(event, t), ...registrationDetails(message.registration, t)],
          tickets: tickets.tickets,
          footer: t.footer.reminders(title),
          unsubscribe: { label: t.footer.unsubscribe, url: message.unsubscribeUrl },
        },
        codes: tickets.codes,
      };
    }
  }
}

function eventDetails(event: EventFacts, t: MailTexts): MailDetail[] {
  const when = showTime(event.startsAt, event.endsAt, event.timeZone, t.locale);
  return [
    { label: t.labels.when, value: when.range },
    { label: t.labels.timeZone, value: when.zone },
    ...(event.venue ? [{ label: t.labels.where, value: event.venue }] : []),
    ...(event.onlineUrl ? [{ label: t.labels.online, value: event.onlineUrl, href: event.onlineUrl }] : []),
    { label: t.labels.organizer, value: event.organizerName },
  ];
}

function registrationDetails(registration: RegistrationFacts, t: MailTexts): MailDetail[] {
  return [
    { label: t.labels.tickets, value: t.quantity(registration.quantity, registration.ticketTypeName) },
    { label: t.labels.reference, value: registration.reference },
  ];
}

function describeChange(change: EventChange, event: EventFacts, t: MailTexts): MailBody['changes'][number] {
  const label = t.changeLabels[change.field];
  if (change.field === 'time') {
    const show = (range: { startsAt: Date; endsAt: Date }) => showTime(range.startsAt, range.endsAt, event.timeZone, t.locale).range;
    return { label, before: show(change.before), after: show(change.after) };
  }
  const none = change.field === 'venue' ? t.noVenue : t.noOnlineUrl;
  return { label, before: change.before ?? none, after: change.after ?? none };
}

function checkInCodes(
  attendees: AttendeeTicket[],
  registration: RegistrationFacts,
  t: MailTexts,
): { tickets: MailTicket[]; codes: ComposedMail['codes'] } {
  const withCodes = attendees.filter((a): a is AttendeeTicket & { ticketCode: string } => a.ticketCode !== null);
  const cids = withCodes.map((_, i) => `check-in-${i + 1}@agora`);
  return {
    tickets: withCodes.map((a, i) => ({
      name: a.name,
      caption: t.tickets.caption(registration.reference),
      alt: t.tickets.alt(a.name, registration.reference),
      cid: cids[i]!,
    })),
    codes: withCodes.map((a, i) => ({ cid: cids[i]!, ticketCode: a.ticketCode })),
  };
}
