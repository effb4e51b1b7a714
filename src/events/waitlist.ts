import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { EntityTable } from '../database/entity-table.js';
import { EventNotices } from './event-notices.js';
import { EventTables } from './event-tables.js';
import type { Event, Registration, TicketType } from './events.model.js';

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
 * (`notices`, in the same transaction). `promote` returns those it confirmed, oldest first; the caller emits their
 * `registration.promoted` with the rest of its change (WebhookOutbox: one job per transaction).
 */
@Injectable()
export class Waitlist {
  /** What it reads: the event's seats, its ticket types' stock, the registrations waiting. */
  private readonly event: EntityTable<Pick<Event, 'capacity' | 'confirmedSeats'>, Event>;
  private readonly tickets: EntityTable<Pick<TicketType, 'id' | 'quantity' | 'sold'>, TicketType>;
  private readonly waiting: EntityTable<Pick<Registration, 'id' | 'userId' | 'ticketTypeId' | 'quantity'>, Registration>;

  constructor(
    tables: EventTables,
    private readonly notices: EventNotices,
  ) {
    this.event = tables.events.pick('capacity', 'confirmedSeats');
    this.tickets = tables.ticketTypes.pick('id', 'quantity', 'sold');
    this.waiting = tables.registrations.pick('id', 'userId', 'ticketTypeId', 'quantity');
  }

  async promote(tx: EntityManager, eventId: string, now: Date): Promise<PromotedRegistration[]> {
    const [eventRow] = (await tx.query(`SELECT ${this.event.select} FROM events e WHERE e.id = $1`, [eventId])) as Row[];
    if (!eventRow) return [];
    const event = this.event.map(eventRow);
    let freeSeats = event.capacity === null ? Infinity : event.capacity - event.confirmedSeats;
    if (freeSeats <= 0) return [];

    const tickets = ((await tx.query(`SELECT ${this.tickets.select} FROM ticket_types t WHERE t.event_id = $1`, [eventId])) as Row[]).map(
      this.tickets.map,
    );
    const ticketsLeft = new Map(tickets.map((t) => [t.id, t.quantity === null ? Infinity : t.quantity - t.sold]));
    const waiting = (
      (await tx.query(
        `SELECT ${this.waiting.select} FROM registrations r WHERE r.event_id = $1 AND r.status = 'waitlisted' ORDER BY r.queue_position`,
        [eventId],
      )) as Row[]
    ).map(this.waiting.map);

    const promoted: PromotedRegistration[] = [];
    for (const registration of waiting) {
      if (freeSeats <= 0) break;
      const left = ticketsLeft.get(registration.ticketTypeId) ?? 0;
      if (registration.quantity > freeSeats || registration.quantity > left) continue;
      freeSeats -= registration.quantity;
      ticketsLeft.set(registration.ticketTypeId, left - registration.quantity);
      promoted.push({ id: registration.id, userId: registration.userId, quantity: registration.quantity });
      await tx.query(`UPDATE registrations SET status = 'confirmed', confirmed_at = $2, updated_at = $2 WHERE id = $1`, [
        registration.id,
        now,
      ]);
      await tx.query(`UPDATE ticket_types SET sold = sold + $2 WHERE id = $1`, [registration.ticketTypeId, registration.quantity]);
      await tx.query(`UPDATE events SET confirmed_seats = confirmed_seats + $2 WHERE id = $1`, [eventId, registration.quantity]);
    }
    for (const { id } of promoted) await this.notices.registration(tx, { message: 'registration.promoted', registrationId: id });
    return promoted;
  }
}

type Row = Record<string, unknown>;
