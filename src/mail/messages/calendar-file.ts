import { getVtimezoneComponent } from '@touch4it/ical-timezones';
import ical, { ICalCalendarMethod, ICalEventStatus } from 'ical-generator';
import { DateTime } from 'luxon';
import type { MailAttachment } from '../outgoing-mail.js';
import type { EventFacts } from './mail-message.js';

/** PUBLISH adds or updates the event in the recipient's calendar; CANCEL removes it. */
export type CalendarMethod = 'PUBLISH' | 'CANCEL';

/** The same for every file about one event, so each new file replaces the copy the calendar holds. */
export function calendarUid(event: Pick<EventFacts, 'id' | 'calendarHost'>): string {
  return `event-${event.id}@${event.calendarHost}`;
}

/**
 * An iCalendar file (RFC 5545) with the event in its own time zone (a VTIMEZONE included), for
 * attaching to a mail as `event.ics`.
 */
export function calendarFile(event: EventFacts, method: CalendarMethod, description: string): MailAttachment {
  const calendar = ical({
    prodId: { company: 'Agora', product: 'Agora events', language: 'EN' },
    method: method === 'PUBLISH' ? ICalCalendarMethod.PUBLISH : ICalCalendarMethod.CANCEL,
  });
  // No calendar-wide zone (ical-generator would write DTSTAMP in it, without the Z it needs): the
  // generator adds a VTIMEZONE for the event's zone alone. A zone it does not know is written in UTC.
  const zoned = getVtimezoneComponent(event.timeZone) !== null;
  calendar.timezone({ name: null, generator: getVtimezoneComponent });
  const at = (date: Date) => (zoned ? DateTime.fromJSDate(date, { zone: event.timeZone }) : date);
  calendar.createEvent({
    id: calendarUid(event),
    // A cancellation must outrank the file that added the event, even when the event itself did not change.
    sequence: method === 'CANCEL' ? event.sequence + 1 : event.sequence,
    start: at(event.startsAt),
    end: at(event.endsAt),
    timezone: zoned ? event.timeZone : null,
    summary: event.title,
    description,
    location: event.venue ?? event.onlineUrl ?? null,
    url: event.url ?? null,
    status: method === 'CANCEL' ? ICalEventStatus.CANCELLED : ICalEventStatus.CONFIRMED,
  });
  return {
    filename: 'event.ics',
    content: calendar.toString(),
    contentType: `text/calendar; charset=utf-8; method=${method}`,
  };
}
