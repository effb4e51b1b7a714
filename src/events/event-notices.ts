import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import type { EntityManager } from 'typeorm';
import { derivedJobId } from '../jobs/job-id.js';
import type { JobInsertion } from '../jobs/job-insertion.js';
import { jobKind } from '../jobs/job-kind.js';
import { JobQueue } from '../jobs/job-queue.js';

/** Why a registration was cancelled, as its attendee is told. */
export type CancelledBy = 'attendee' | 'organizer' | 'event_cancelled';

/** What changed about an event that its attendees must hear of. */
export type EventChange =
  /** Start, end or time zone (times in ISO 8601; the zone is the event's, as the mail shows it). */
  | {
      field: 'time';
      before: { startsAt: string; endsAt: string; timeZone: string };
      after: { startsAt: string; endsAt: string; timeZone: string };
    }
  /** The venue as one line (name, address, city, country), or the online link; null when there is none. */
  | { field: 'venue' | 'online_url'; before: string | null; after: string | null };

/** A message to one registrant about their registration (src/notifications/ sends it). */
export type RegistrationNotice =
  | { message: 'registration.confirmed' | 'registration.waitlisted' | 'registration.promoted'; registrationId: string }
  | { message: 'registration.cancelled'; registrationId: string; by: CancelledBy }
  /** `changedAt`: when the change was made (ISO 8601). */
  | { message: 'event.changed'; registrationId: string; changes: EventChange[]; changedAt: string }
  | { message: 'event.cancelled'; registrationId: string }
  /** Non-essential: the day before, to those who did not turn reminders off. `startsAt`: the start it was planned for. */
  | { message: 'event.reminder'; registrationId: string; startsAt: string };

/** What an event's attendees are told of, as values: its time, its venue on one line, its online link (by its format). */
export interface ToldValues {
  time: { startsAt: string; endsAt: string; timeZone: string };
  venue: string | null;
  onlineUrl: string | null;
}

export function toldValues(event: {
  startsAt: Date;
  endsAt: Date;
  timeZone: string;
  format: 'in_person' | 'online' | 'hybrid';
  venue: { name: string | null; address: string | null; city: string | null; country: string | null } | null;
  onlineUrl: string | null;
}): ToldValues {
  return {
    time: { startsAt: event.startsAt.toISOString(), endsAt: event.endsAt.toISOString(), timeZone: event.timeZone },
    venue: event.format === 'online' || !event.venue ? null : venueLine(event.venue),
    onlineUrl: event.format === 'in_person' ? null : event.onlineUrl,
  };
}

/** What changed between two states of an event that its attendees must hear of. */
export function changesBetween(before: ToldValues, after: ToldValues): EventChange[] {
  const changes: EventChange[] = [];
  const [was, now] = [before.time, after.time];
  if (was.startsAt !== now.startsAt || was.endsAt !== now.endsAt || was.timeZone !== now.timeZone) {
    changes.push({ field: 'time', before: was, after: now });
  }
  if (before.venue !== after.venue) changes.push({ field: 'venue', before: before.venue, after: after.venue });
  if (before.onlineUrl !== after.onlineUrl) changes.push({ field: 'online_url', before: before.onlineUrl, after: after.onlineUrl });
  return changes;
}

/** The venue of an event on one line (name, address, city, country), as mails and change notices show it. */
export function venueLine(venue: {
  name: string | null;
  address: string | null;
  city: string | null;
  country: string | null;
}): string | null {
  const parts = [venue.name, venue.address, venue.city, venue.country].filter((part): part is string => !!part);
  return parts.length ? parts.join(', ') : null;
}

/** A change to a whole event: one job that enqueues a RegistrationNotice per registration concerned. */
export type EventNotice =
  | { message: 'event.changed'; eventId: string; changes: EventChange[]; changedAt: string }
  | { message: 'event.cancelled'; eventId: string };

/** Sending one mail: short attempts, so a job a killed process had taken runs again soon (a send is bounded at 25 s: SMTP_SEND_LIMIT_MS). */
export const REGISTRATION_NOTICES = jobKind<RegistrationNotice>('registration-notices', {
  expireInSeconds: 30,
  label: (notice) => notice.message,
});

export const EVENT_NOTICES = jobKind<EventNotice>('event-notices', {
  expireInSeconds: 120,
  label: (notice) => `${notice.message}.fan-out`,
});

const REMINDER_LEAD_MS = 24 * 3600_000;

/**
 * What the events domain tells people, written with the change itself (a transactional outbox): each
 * method takes the transaction of the change, so a change that rolls back tells nobody, and one that
 * commits is told even if the process dies right after. The messages go out from jobs, never in the request.
 */
@Injectable()
export class EventNotices {
  private readonly on: boolean;

  constructor(
    private readonly jobs: JobQueue,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.on = config.attendeeMail;
    jobs.declare(REGISTRATION_NOTICES);
    jobs.declare(EVENT_NOTICES);
  }

  /** Whether attendees are told anything (ATTENDEE_MAIL): when not, no notice is written. */
  get telling(): boolean {
    return this.on;
  }

  /**
   * The insert of a registration's notice as part of a statement of the caller's (`JobQueue.insertion`),
   * its notice given by the SQL expression `notice`; null when attendees are told nothing.
   */
  async registrationInsertion(firstParameter: number, notice: string): Promise<JobInsertion | null> {
    return this.on ? this.jobs.insertion(REGISTRATION_NOTICES, firstParameter, notice) : null;
  }

  /** A registration was confirmed, waitlisted, promoted or cancelled. */
  async registration(tx: EntityManager, notice: RegistrationNotice): Promise<void> {
    if (!this.on) return;
    await this.jobs.enqueue(REGISTRATION_NOTICES, notice, { tx });
  }

  /** A seat is confirmed: the reminder the day before the event (skipped at its time if things changed). */
  async remind(tx: EntityManager | undefined, registrationId: string, startsAt: Date, now: Date): Promise<void> {
    const at = new Date(startsAt.getTime() - REMINDER_LEAD_MS);
    if (!this.on) return;
    if (at <= now) return;
    await this.jobs.enqueue(
      REGISTRATION_NOTICES,
      { message: 'event.reminder', registrationId, startsAt: startsAt.toISOString() },
      { ...(tx && { tx }), startAfter: at, id: derivedJobId('reminder', registrationId, startsAt.toISOString()) },
    );
  }

  /** The event's time, place or online link changed, or it was cancelled: everyone concerned hears of it. */
  async event(tx: EntityManager, notice: EventNotice): Promise<void> {
    if (!this.on) return;
    await this.jobs.enqueue(EVENT_NOTICES, notice, { tx });
  }
}
