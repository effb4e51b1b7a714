import { venueLine, type EventChange as NoticeChange, type RegistrationNotice } from '../events/event-notices.js';
import type { RegistrationFacts } from '../events/notice-facts.js';
import type { EventChange, EventFacts, MailMessage } from '../mail/messages/mail-message.js';
import type { User } from '../users/user.model.js';

export interface NoticeLinks {
  /** The check-in code of each attendee (by attendee id); none for an online event. */
  ticketCodes: Map<string, string>;
  /** A reminder's one-click unsubscribe address. */
  unsubscribeUrl?: string;
  /** The event's page on the platform's site (EVENTS_WEB_URL), or null when none is configured. */
  eventUrl: string | null;
  /** Agora's host (BASE_URL): names the event in calendar files. */
  calendarHost: string;
}

/** The mail a notice becomes, from the registration as it is now. */
export function noticeMail(notice: RegistrationNotice, facts: RegistrationFacts, user: User, links: NoticeLinks): MailMessage {
  const event: EventFacts = {
    id: facts.event.id,
    title: facts.event.title,
    startsAt: facts.event.startsAt,
    endsAt: facts.event.endsAt,
    timeZone: facts.event.timeZone,
    venue: facts.event.format === 'online' ? null : venueLine(facts.event.venue),
    onlineUrl: facts.event.format === 'in_person' ? null : facts.event.onlineUrl,
    organizerName: facts.event.organizerName,
    url: links.eventUrl,
    calendarHost: links.calendarHost,
    sequence: Math.floor(facts.event.updatedAt.getTime() / 1000),
  };
  const recipient = { name: user.name, email: user.email };
  const registration = {
    reference: facts.registration.reference,
    quantity: facts.registration.quantity,
    ticketTypeName: facts.registration.ticketTypeName,
  };
  const about = { recipient, event, registration, manageUrl: links.eventUrl };
  const attendees = () => facts.attendees.map((a) => ({ name: a.name, ticketCode: links.ticketCodes.get(a.id) ?? null }));
  switch (notice.message) {
    case 'registration.confirmed':
    case 'registration.promoted':
      return { kind: notice.message, ...about, attendees: attendees() };
    case 'registration.waitlisted':
      return { kind: notice.message, ...about };
    case 'registration.cancelled':
      return { kind: notice.message, ...about, by: notice.by };
    case 'event.changed':
      return { kind: notice.message, recipient, event, changes: notice.changes.map(mailChange), manageUrl: links.eventUrl };
    case 'event.cancelled':
      return { kind: notice.message, ...about };
    case 'event.reminder':
      return { kind: notice.message, ...about, unsubscribeUrl: links.unsubscribeUrl!, attendees: attendees() };
  }
}

function mailChange(change: NoticeChange): EventChange {
  if (change.field !== 'time') return change;
  const range = (r: { startsAt: string; endsAt: string }) => ({ startsAt: new Date(r.startsAt), endsAt: new Date(r.endsAt) });
  return { field: 'time', before: range(change.before), after: range(change.after) };
}
