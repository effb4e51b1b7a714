import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { Clock } from '../clock/clock.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { EVENT_NOTICES, EventNotice, EventNotices, REGISTRATION_NOTICES, RegistrationNotice, toldValues } from '../events/event-notices.js';
import { NoticeFacts, RegistrationFacts } from '../events/notice-facts.js';
import { TicketCodes } from '../events/ticket-codes.js';
import { derivedJobId } from '../jobs/job-id.js';
import { JobContext } from '../jobs/job-kind.js';
import { JobQueue } from '../jobs/job-queue.js';
import { Mailer } from '../mail/mailer.js';
import { renderMail } from '../mail/messages/render-mail.js';
import type { User } from '../users/user.model.js';
import { UsersService } from '../users/users.service.js';
import { noticeMail } from './notice-mail.js';
import { UnsubscribeLinks } from './unsubscribe-links.js';

/**
 * Sends what the events domain wrote to its outbox (EventNotices): one mail per registration notice,
 * and for an event-wide notice one registration notice per registration concerned. Runs in jobs only.
 *
 * A notice is read against the registration as it is when the job runs: a confirmation for a
 * registration cancelled since is not sent (the cancellation's own mail follows), nor a reminder for a
 * registration, time or event that changed, nor one to a user who turned reminders off.
 */
@Injectable()
export class NoticeSender implements OnModuleInit {
  private readonly logger = new Logger('Notifications');

  constructor(
    private readonly jobs: JobQueue,
    private readonly notices: EventNotices,
    private readonly facts: NoticeFacts,
    private readonly users: UsersService,
    private readonly tickets: TicketCodes,
    private readonly mailer: Mailer,
    private readonly unsubscribe: UnsubscribeLinks,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.jobs.handle(REGISTRATION_NOTICES, (notice, job) => this.sendRegistrationNotice(notice, job));
    this.jobs.handle(EVENT_NOTICES, (notice, job) => this.fanOut(notice, job));
  }

  async sendRegistrationNotice(notice: RegistrationNotice, job: JobContext): Promise<void> {
    const facts = await this.facts.ofRegistration(notice.registrationId);
    if (!facts) return; // the event was deleted (a draft's registrations go with it)
    const user = await this.users.findById(facts.registration.userId);
    if (!user || user.state !== 'active') return;
    const skip = staleReason(notice, facts, user);
    if (skip) {
      this.logger.debug(`Notice ${job.id} (${notice.message}) not sent: ${skip}`);
      return;
    }
    const ticketCodes = await this.ticketCodes(notice, facts);
    const message = noticeMail(notice, facts, user, {
      ticketCodes,
      unsubscribeUrl: notice.message === 'event.reminder' ? this.unsubscribe.url(user.id) : undefined,
      eventUrl: this.eventUrl(facts.event),
      calendarHost: new URL(this.config.baseUrl).hostname,
    });
    const rendered = await renderMail(message);
    // The reminder first: planning it twice adds nothing (its id is derived), while a failure after the
    // send would send the confirmation again.
    if (notice.message === 'registration.confirmed' || notice.message === 'registration.promoted') {
      await this.notices.remind(undefined, facts.registration.id, facts.event.startsAt, this.clock.now());
    }
    // The job's id: every attempt of this job sends the same Message-ID, so a mail system can tell a repeat.
    await this.mailer.send({ ...rendered, to: formatAddress(user), messageId: job.id });
  }

  async fanOut(notice: EventNotice, job: JobContext): Promise<void> {
    const ids =
      notice.message === 'event.changed'
        ? await this.facts.registrationsOf(notice.eventId, ['confirmed'])
        : await this.facts.endedByCancellation(notice.eventId);
    const perRegistration = ids.map((registrationId) => ({
      id: derivedJobId(job.id, registrationId),
      data: (notice.message === 'event.changed'
        ? { message: 'event.changed', registrationId, changes: notice.changes, changedAt: notice.changedAt }
        : { message: 'event.cancelled', registrationId }) as RegistrationNotice,
    }));
    await this.jobs.enqueueMany(REGISTRATION_NOTICES, perRegistration);
    if (notice.message === 'event.changed' && notice.changes.some((change) => change.field === 'time')) {
      const facts = ids.length ? await this.facts.ofRegistration(ids[0]!) : null;
      if (facts)
        for (const registrationId of ids) await this.notices.remind(undefined, registrationId, facts.event.startsAt, this.clock.now());
    }
  }

  private eventUrl(event: { id: string; slug: string }): string | null {
    const template = this.config.eventsWebUrl;
    return template ? template.replaceAll('{id}', encodeURIComponent(event.id)).replaceAll('{slug}', encodeURIComponent(event.slug)) : null;
  }

  /** A code per attendee, for an event with a place to check in at: in confirmations and reminders (as pretix's). */
  private async ticketCodes(notice: RegistrationNotice, facts: RegistrationFacts): Promise<Map<string, string>> {
    const codes = new Map<string, string>();
    const withTickets = ['registration.confirmed', 'registration.promoted', 'event.reminder'].includes(notice.message);
    if (!withTickets || facts.event.format === 'online') return codes;
    for (const attendee of facts.attendees) {
      codes.set(
        attendee.id,
        await this.tickets.issue({
          attendeeId: attendee.id,
          registrationId: facts.registration.id,
          eventId: facts.event.id,
          userId: facts.registration.userId,
        }),
      );
    }
    return codes;
  }
}

/** Why a notice no longer says what is true (it is then not sent), or undefined. */
function staleReason(notice: RegistrationNotice, facts: RegistrationFacts, user: User): string | undefined {
  const status = facts.registration.status;
  switch (notice.message) {
    case 'registration.confirmed':
    case 'registration.promoted':
      return status === 'confirmed' ? undefined : `the registration is ${status} now`;
    case 'event.changed': {
      if (status !== 'confirmed') return `the registration is ${status} now`;
      const confirmedAt = facts.registration.confirmedAt;
      if (confirmedAt && confirmedAt > new Date(notice.changedAt)) return 'confirmed after the change, with the new details';
      const now = toldValues(facts.event);
      const stillSo = notice.changes.some((change) =>
        change.field === 'time'
          ? change.after.startsAt === now.time.startsAt &&
            change.after.endsAt === now.time.endsAt &&
            change.after.timeZone === now.time.timeZone
          : change.after === (change.field === 'venue' ? now.venue : now.onlineUrl),
      );
      return stillSo ? undefined : 'changed again since (that change is told)';
    }
    case 'registration.waitlisted':
      return status === 'waitlisted' ? undefined : `the registration is ${status} now`;
    case 'event.reminder':
      if (!user.mailReminders) return 'the user turned reminders off';
      if (status !== 'confirmed' || facts.event.status !== 'published') return 'the registration or the event is no longer on';
      return facts.event.startsAt.toISOString() === notice.startsAt
        ? undefined
        : 'the event moved (a reminder for its new time is planned)';
    case 'registration.cancelled':
    case 'event.cancelled':
      return undefined;
  }
}

/** `"Name" <address>`, the name quoted by the mail library (nodemailer) when the mail is built. */
function formatAddress(user: User): string {
  return `"${user.name.replace(/["\\\r\n]/g, ' ')}" <${user.email}>`;
}
