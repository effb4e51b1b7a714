import type { Event, TicketType } from './events.model.js';

/**
 * Where an event and a ticket type stand in time: the one definition that GraphQL (`phase`, `onSale`),
 * REST (`phase`) and registration (what may still be booked) all use.
 */
export type EventPhaseValue = 'upcoming' | 'ongoing' | 'ended';

export function eventPhase(event: Pick<Event, 'startsAt' | 'endsAt'>, now: Date): EventPhaseValue {
  const t = now.getTime();
  return t < event.startsAt.getTime() ? 'upcoming' : t < event.endsAt.getTime() ? 'ongoing' : 'ended';
}

export type SalesState = 'not_started' | 'open' | 'ended';

/** A ticket type's sales window at `now`: opens at its start (inclusive), closes at its end (exclusive). */
export function salesState(window: { salesStartAt: Date | null; salesEndAt: Date | null }, now: Date): SalesState {
  if (window.salesStartAt && window.salesStartAt > now) return 'not_started';
  if (window.salesEndAt && window.salesEndAt <= now) return 'ended';
  return 'open';
}

/** On sale: within its sales window and not sold out. */
export function isOnSale(ticketType: Pick<TicketType, 'salesStartAt' | 'salesEndAt' | 'quantity' | 'sold'>, now: Date): boolean {
  return salesState(ticketType, now) === 'open' && (ticketType.quantity === null || ticketType.sold < ticketType.quantity);
}
