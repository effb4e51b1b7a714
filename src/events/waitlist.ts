import { EntityManager } from 'typeorm';
import type { EventNotices } from './event-notices.js';

/** A registration the waitlist confirmed: enough to name it in a domain event (registration.promoted). */
export interface PromotedRegistration {
  id: string;
  userId: string;
  /** Its seats. */
  quantity: number;
}

/**
 * Gives free seats to waitlisted registrations, oldest first, inside the caller's transaction, which
 * must hold the event's row lock (`EventsReader.changeEvent`). A registration that does not fit (its ticket type is sold out, or it
 * asks for more seats than are free) keeps its place while younger ones that fit go ahead, so no seat
 * stays free while someone in the queue could use it. Each registration it confirms is told so
 * (`notices`, in the same transaction). Returns those it confirmed, oldest first; the caller emits their
 * `registration.promoted` with the rest of its change (WebhookOutbox: one job per transaction).
 */
export async function promoteWaitlist(
  tx: EntityManager,
  eventId: string,
  now: Date,
  notices: EventNotices,
): Promise<PromotedRegistration[]> {
  const [event] = (await tx.query(`SELECT capacity, confirmed_seats FROM events WHERE id = $1`, [eventId])) as {
    capacity: number | null;
    confirmed_seats: number;
  }[];
  if (!event) return [];
  let freeSeats = event.capacity === null ? Infinity : event.capacity - event.confirmed_seats;
  if (freeSeats <= 0) return [];

  const tickets = (await tx.query(`SELECT id, quantity, sold FROM ticket_types WHERE event_id = $1`, [eventId])) as {
    id: string;
    quantity: number | null;
    sold: number;
  }[];
  const ticketsLeft = new Map(tickets.map((t) => [t.id, t.quantity === null ? Infinity : t.quantity - t.sold]));
  const waiting = (await tx.query(
    `SELECT id, user_id, ticket_type_id, quantity FROM registrations WHERE event_id = $1 AND status = 'waitlisted' ORDER BY queue_position`,
    [eventId],
  )) as { id: string; user_id: string; ticket_type_id: string; quantity: number }[];

  const promoted: PromotedRegistration[] = [];
  for (const registration of waiting) {
    if (freeSeats <= 0) break;
    const left = ticketsLeft.get(registration.ticket_type_id) ?? 0;
    if (registration.quantity > freeSeats || registration.quantity > left) continue;
    freeSeats -= registration.quantity;
    ticketsLeft.set(registration.ticket_type_id, left - registration.quantity);
    promoted.push({ id: registration.id, userId: registration.user_id, quantity: registration.quantity });
    await tx.query(`UPDATE registrations SET status = 'confirmed', confirmed_at = $2, updated_at = $2 WHERE id = $1`, [
      registration.id,
      now,
    ]);
    await tx.query(`UPDATE ticket_types SET sold = sold + $2 WHERE id = $1`, [registration.ticket_type_id, registration.quantity]);
    await tx.query(`UPDATE events SET confirmed_seats = confirmed_seats + $2 WHERE id = $1`, [eventId, registration.quantity]);
  }
  for (const { id } of promoted) await notices.registration(tx, { message: 'registration.promoted', registrationId: id });
  return promoted;
}
