import { hasSecondFactorSql } from '../users/second-factors.js';

/** SQL expressions (parameters or columns) naming what an application's right to a domain event depends on. */
export interface AudienceTerms {
  /** The application (uuid). */
  application: string;
  /** The domain event's type (text). */
  type: string;
  organizer: string;
  event: string;
  /** The registrant of a registration or attendee event, or NULL. */
  user: string;
  /** The Clock's time (timestamptz): a member's second-factor grace period ends by it. */
  now: string;
}

/**
 * "An application hears of this domain event" (docs/webhooks.md, "What an application's endpoint
 * receives"), as one SQL condition that the fan-out and every attempt share: an active user with a
 * grant of the application that includes `api` or `read_api` is concerned — the registrant; a member
 * of the organizer who acts for it (EventsReader's rule: not held back by the organizer's second-factor
 * requirement past its grace period); for event.changed and event.cancelled, anyone registered
 * (confirmed or waitlisted, or cancelled by that event's cancellation).
 */
export function applicationConcernedSql(p: AudienceTerms): string {
  return `EXISTS (
    SELECT 1 FROM oauth_grants g
      JOIN users gu ON gu.id = g.user_id AND gu.state = 'active'
     WHERE g.application_id = ${p.application}
       AND g.scopes && ARRAY['api', 'read_api']::text[]
       AND (g.user_id = ${p.user}
            OR EXISTS (
                 SELECT 1 FROM organizer_members m JOIN organizers o ON o.id = m.organizer_id
                  WHERE m.organizer_id = ${p.organizer} AND m.user_id = g.user_id
                    AND (o.second_factor_required_since IS NULL OR ${hasSecondFactorSql('gu')}
                         OR ${p.now} < GREATEST(o.second_factor_required_since, m.created_at) + o.second_factor_grace_hours * interval '1 hour'))
            OR (${p.type} IN ('event.changed', 'event.cancelled') AND EXISTS (
                 SELECT 1 FROM registrations r
                  WHERE r.event_id = ${p.event} AND r.user_id = g.user_id
                    AND (r.status IN ('confirmed', 'waitlisted') OR r.cancelled_by = 'event_cancelled')))))`;
}
