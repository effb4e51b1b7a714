import type { EntityTable } from '../database/entity-table.js';
import type { Statement } from '../database/prepared-statements.js';
import type { EventNotices } from './event-notices.js';
import type { EventTables } from './event-tables.js';
import type { Event, TicketType } from './events.model.js';
import type { WebhookOutbox } from './webhook-outbox.js';

/**
 * A registration in one statement, its own transaction (the ticket rush, docs/benchmarks.md): it locks
 * the event's and the ticket type's rows, decides confirmed or waitlisted, inserts the registration and
 * its attendees, takes the seats and writes the mail and webhook jobs (the transactional outbox: they
 * commit with it or not at all). The locks end with the statement's commit, inside PostgreSQL: the
 * holder never waits on the server's event loop. Every value the service needs afterwards is known
 * before (ids made by the service, the time of the request) or comes back from it, so nothing is read
 * again after the commit. It runs as a named prepared statement on PostgreSQL (PreparedStatements).
 *
 * The lock is taken on both rows, the event's first, FOR UPDATE: a statement waiting for a lock then
 * reads the newest version of the row (PostgreSQL re-reads a locked row once it has it), so the decision
 * sees every registration committed before. The UPDATEs of the counters act on those newest versions too, and the
 * CHECK constraints on them stand behind the decision. Nothing is written unless the event and the
 * ticket type take registrations (`open`, the SQL of `checkOpen` in the service, which gives the precise
 * error from the state the statement returns when it wrote nothing). When it writes no registration it
 * writes no job either (JobQueue.insertion: their data is then NULL).
 *
 * Waitlisted registrations take the exclusive lock too. They once shared it (FOR SHARE, so that any
 * number committed together), but PostgreSQL grants a share lock on a row that is only share-locked
 * without queueing behind a transaction waiting for FOR UPDATE: a stream of overlapping waitlisted
 * registrations kept every change to the event (a cancellation, an edit, seats freed or taken) waiting
 * until the stream ended, past the statement timeout in a ticket rush.
 *
 * Parameters: $1 event, $2 ticket type, $3 registration id, $4 user, $5 reference, $6 seats, $7 now,
 * $8 attendee ids, $9 names, $10 emails, $11/$12 the webhook fan-out if confirmed/waitlisted,
 * $13/$14 the mail notice if confirmed/waitlisted (when mail is on), then the jobs' own parameters.
 */
export interface ClaimStatement extends Statement {
  /** The jobs' own parameters, after the registration's. */
  jobValues: unknown[];
  /** Whether the statement writes the mail notice ($13, $14). */
  mail: boolean;
  /** What it reads of the event's and the ticket type's rows as it locked them: in its answer under `e.` and `t.` (`mapAs`). */
  locked: { event: EntityTable<LockedEvent, Event>; ticketType: EntityTable<LockedTicketType, TicketType> };
}

type LockedEvent = Pick<Event, 'id' | 'status' | 'endsAt' | 'capacity' | 'confirmedSeats'>;
type LockedTicketType = Pick<TicketType, 'quantity' | 'sold' | 'salesStartAt' | 'salesEndAt'>;

/**
 * What the statement answers: the rows it decided on (`locked`), whether the seats fit, and the
 * registration it wrote (its own columns, EventTables.registrations; null when it wrote none).
 */
export interface ClaimRow extends Record<string, unknown> {
  fits: boolean;
}

const REGISTRATION_PARAMETERS = 12;

export async function claimStatement(tables: EventTables, outbox: WebhookOutbox, notices: EventNotices): Promise<ClaimStatement> {
  const chosen = (confirmed: number) =>
    `(SELECT CASE WHEN r.status = 'confirmed' THEN $${confirmed}::jsonb ELSE $${confirmed + 1}::jsonb END FROM r)`;
  const mail = notices.telling;
  let next = REGISTRATION_PARAMETERS + (mail ? 2 : 0) + 1;
  const fanOut = await outbox.insertion(next, chosen(11));
  next += fanOut.values.length;
  const notice = mail ? await notices.registrationInsertion(next, chosen(13)) : null;
  const locked = {
    event: tables.events.pick('id', 'status', 'endsAt', 'capacity', 'confirmedSeats'),
    ticketType: tables.ticketTypes.pick('quantity', 'sold', 'salesStartAt', 'salesEndAt'),
  };
  const registration = tables.registrations.values({
    id: '$3::uuid',
    eventId: '$1::uuid',
    ticketTypeId: '$2::uuid',
    userId: '$4::uuid',
    reference: '$5::text',
    status: `CASE WHEN d.fits THEN 'confirmed' ELSE 'waitlisted' END`,
    quantity: '$6::int',
    createdAt: '$7::timestamptz',
    confirmedAt: 'CASE WHEN d.fits THEN $7::timestamptz END',
    updatedAt: '$7::timestamptz',
  });
  const attendee = tables.attendees.values({
    id: 'x.id',
    registrationId: 'r.id',
    name: 'x.name',
    email: 'x.email',
    position: 'x.position',
    createdAt: '$7::timestamptz',
  });
  // The event's row first, then the ticket type's (the order every change under the event's lock takes).
  const text = `
    WITH e AS (
      SELECT ${locked.event.select} FROM events e WHERE e.id = $1::uuid FOR UPDATE),
    t AS (
      SELECT ${locked.ticketType.select} FROM ticket_types t
       WHERE t.id = $2::uuid AND t.event_id = (SELECT id FROM e) FOR UPDATE),
    d AS (
      SELECT e.status = 'published' AND e.ends_at > $7::timestamptz
               AND (t.sales_start_at IS NULL OR t.sales_start_at <= $7::timestamptz)
               AND (t.sales_end_at IS NULL OR t.sales_end_at > $7::timestamptz) AS open,
             (e.capacity IS NULL OR e.confirmed_seats + $6::int <= e.capacity)
               AND (t.quantity IS NULL OR t.sold + $6::int <= t.quantity) AS fits
        FROM e, t),
    r AS (
      INSERT INTO registrations AS r (${registration.columns})
      SELECT ${registration.values}
        FROM d WHERE d.open
      RETURNING ${tables.registrations.select}),
    a AS (
      INSERT INTO attendees (${attendee.columns})
      SELECT ${attendee.values}
        FROM r, unnest($8::uuid[], $9::text[], $10::text[]) WITH ORDINALITY AS x(id, name, email, position)),
    seats AS (
      UPDATE events SET confirmed_seats = confirmed_seats + $6::int
       WHERE id = $1::uuid AND EXISTS (SELECT 1 FROM r WHERE r.status = 'confirmed')),
    tickets AS (
      UPDATE ticket_types SET sold = sold + $6::int
       WHERE id = $2::uuid AND EXISTS (SELECT 1 FROM r WHERE r.status = 'confirmed')),
    fan_out AS (${fanOut.sql})${
      notice
        ? `,
    notice AS (${notice.sql})`
        : ''
    }
    SELECT ${locked.event.selectAs()}, ${locked.ticketType.selectAs()}, d.fits, r.* FROM e, t, d LEFT JOIN r ON true`;
  return { name: 'registration-claim', text, jobValues: [...fanOut.values, ...(notice?.values ?? [])], mail, locked };
}
