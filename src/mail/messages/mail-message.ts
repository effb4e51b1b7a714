/** What a mail says about an event: the facts as they are now. */
export interface EventFacts {
  id: string;
  title: string;
  startsAt: Date;
  endsAt: Date;
  /** IANA time zone the event takes place in (`Europe/Berlin`): every time in the mail is shown in it. */
  timeZone: string;
  venue: string | null;
  onlineUrl: string | null;
  organizerName: string;
  /** The event's page on the platform's site (EVENTS_WEB_URL), or null when there is none: the mail then has no link to it. */
  url: string | null;
  /** The host naming the event in calendar files (`event-<id>@<host>`): Agora's own (BASE_URL), the same in every mail. */
  calendarHost: string;
  /**
   * SEQUENCE of the event in calendar files: must grow with every change, e.g. the event's `updated_at`
   * in epoch seconds, so a calendar replaces the copy it holds.
   */
  sequence: number;
}

export interface Recipient {
  name: string;
  email: string;
}

export interface RegistrationFacts {
  /** Short code the person can read out at the door or quote to the organizer. */
  reference: string;
  quantity: number;
  ticketTypeName: string;
}

/** One attendee of a registration; `ticketCode` (a signed check-in code) is null for online-only events. */
export interface AttendeeTicket {
  name: string;
  ticketCode: string | null;
}

export interface TimeRange {
  startsAt: Date;
  endsAt: Date;
}

/** What changed about an event, before and after (null: none, e.g. no venue). */
export type EventChange =
  { field: 'time'; before: TimeRange; after: TimeRange } | { field: 'venue' | 'online_url'; before: string | null; after: string | null };

interface AboutRegistration {
  recipient: Recipient;
  event: EventFacts;
  registration: RegistrationFacts;
  /** Where the person sees and cancels the registration, or null when the platform has no such page. */
  manageUrl: string | null;
}

/** A confirmed registration (also after the waitlist): with the calendar file and the check-in codes. */
export interface RegistrationConfirmedMail extends AboutRegistration {
  kind: 'registration.confirmed' | 'registration.promoted';
  attendees: AttendeeTicket[];
}

export interface RegistrationWaitlistedMail extends AboutRegistration {
  kind: 'registration.waitlisted';
}

export interface RegistrationCancelledMail extends AboutRegistration {
  kind: 'registration.cancelled';
  /** Who ended it: the person, the organizer, or the event's cancellation. */
  by: 'attendee' | 'organizer' | 'event_cancelled';
}

export interface EventChangedMail {
  kind: 'event.changed';
  recipient: Recipient;
  /** The event's new facts. */
  event: EventFacts;
  changes: EventChange[];
  manageUrl: string | null;
}

export interface EventCancelledMail extends AboutRegistration {
  kind: 'event.cancelled';
}

/** Not essential: the person may turn reminders off (List-Unsubscribe, RFC 8058). */
export interface EventReminderMail extends AboutRegistration {
  kind: 'event.reminder';
  /** Takes a one-click POST (RFC 8058) and a GET from the link in the mail. */
  unsubscribeUrl: string;
  /** Shown with their check-in codes, when given. */
  attendees?: AttendeeTicket[];
}

/** Every mail Agora sends, told apart by `kind`. */
export type MailMessage =
  | RegistrationConfirmedMail
  | RegistrationWaitlistedMail
  | RegistrationCancelledMail
  | EventChangedMail
  | EventCancelledMail
  | EventReminderMail;

export type MailKind = MailMessage['kind'];
