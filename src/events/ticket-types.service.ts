import { Injectable } from '@nestjs/common';
import { Clock } from '../clock/clock.js';
import { isOnSale } from './schedule.js';
import { Assignments } from '../database/assignments.js';
import {
  checkOrderLimits,
  checkPositiveInt,
  checkPrice,
  checkSalesWindow,
  checkDescription,
  checkName,
  ifGiven,
  MAX_TICKET_TYPES_PER_EVENT,
} from './event-validation.js';
import { EventError } from './events.errors.js';
import type { TicketType } from './events.model.js';
import { EventsPolicy } from './events.policy.js';
import type { EventsReader } from './events.reader.js';
import { EventTables } from './event-tables.js';
import { EventsService } from './events.service.js';
import { checkAll } from '../errors/domain-error.js';
import { Waitlist } from './waitlist.js';
import { registrationEvent } from './webhook-events.js';
import { WebhookOutbox } from './webhook-outbox.js';

export interface TicketTypeInput {
  name: string;
  description?: string | null;
  price: { amount: number; currency: string };
  quantity?: number | null;
  salesStartAt?: Date | null;
  salesEndAt?: Date | null;
  hidden?: boolean | null;
  minPerOrder?: number | null;
  maxPerOrder?: number | null;
}

/** Fields to change; omitted (or null, except for the sales window, where null clears) keeps the current value. */
export type TicketTypeChanges = { [K in keyof TicketTypeInput]?: TicketTypeInput[K] | null };

/** Ticket types of an event: price, quantity, sales window, per-order limits. */
@Injectable()
export class TicketTypesService {
  constructor(
    private readonly events: EventsService,
    private readonly clock: Clock,
    private readonly tables: EventTables,
    private readonly outbox: WebhookOutbox,
    private readonly waitlist: Waitlist,
  ) {}

  async create(reader: EventsReader, eventId: string, input: TicketTypeInput): Promise<TicketType> {
    await this.events.requireManageable(reader, eventId, 'add ticket types to this event');
    const minPerOrder = input.minPerOrder ?? 1;
    const maxPerOrder = input.maxPerOrder ?? Math.max(minPerOrder, 10);
    const { name, description, price, quantity } = checkAll({
      name: () => checkName(input.name, 100),
      description: () => checkDescription(input.description ?? '', 2000),
      price: () => checkPrice(input.price.amount, input.price.currency),
      quantity: () => (input.quantity == null ? null : checkPositiveInt(input.quantity, 'quantity', 'INVALID_QUANTITY', 'Quantity')),
      orderLimits: () => checkOrderLimits(minPerOrder, maxPerOrder),
      salesWindow: () => checkSalesWindow(input.salesStartAt ?? null, input.salesEndAt ?? null),
    });
    const now = this.clock.now();
    const { ticketTypes } = this.tables;
    const created = await reader.changeEvent(eventId, async (tx) => {
      const [{ n }] = (await tx.query(`SELECT count(*)::int AS n FROM ticket_types WHERE event_id = $1`, [eventId])) as [{ n: number }];
      if (n >= MAX_TICKET_TYPES_PER_EVENT) {
        throw new EventError('TOO_MANY_TICKET_TYPES', `An event has at most ${MAX_TICKET_TYPES_PER_EVENT} ticket types.`, 'eventId');
      }
      return (await tx.query(
        `INSERT INTO ticket_types AS t (event_id, name, description, price_amount, price_currency, quantity, sales_start_at, sales_end_at, hidden,
                                        min_per_order, max_per_order, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12) RETURNING ${ticketTypes.select}`,
        [
          eventId,
          name,
          description,
          price.amount,
          price.currency,
          quantity,
          input.salesStartAt ?? null,
          input.salesEndAt ?? null,
          input.hidden ?? false,
          minPerOrder,
          maxPerOrder,
          now,
        ],
      )) as Record<string, unknown>[];
    });
    return ticketTypes.map(created[0]!);
  }

  /**
   * Changes a ticket type. A raised quantity may confirm waitlisted registrations: each emits
   * `registration.promoted` in the change's transaction (a ticket type's change is no `event.changed`).
   */
  async update(reader: EventsReader, ticketTypeId: string, changes: TicketTypeChanges): Promise<TicketType> {
    const current = await this.requireManageable(reader, ticketTypeId, 'change this ticket type');
    const salesChange = changes.salesStartAt !== undefined || changes.salesEndAt !== undefined;
    const start = changes.salesStartAt === undefined ? current.salesStartAt : changes.salesStartAt;
    const end = changes.salesEndAt === undefined ? current.salesEndAt : changes.salesEndAt;
    const limitsChange = changes.minPerOrder != null || changes.maxPerOrder != null;
    const min = changes.minPerOrder ?? current.minPerOrder;
    const max = changes.maxPerOrder ?? current.maxPerOrder;
    const valid = checkAll({
      name: () => ifGiven(changes.name, (name) => checkName(name, 100)),
      description: () => ifGiven(changes.description, (description) => checkDescription(description, 2000)),
      price: () => ifGiven(changes.price, (price) => checkPrice(price.amount, price.currency)),
      quantity: () => ifGiven(changes.quantity, (quantity) => checkPositiveInt(quantity, 'quantity', 'INVALID_QUANTITY', 'Quantity')),
      salesWindow: () => (salesChange ? checkSalesWindow(start, end) : undefined),
      orderLimits: () => (limitsChange ? checkOrderLimits(min, max) : undefined),
    });
    const update = new Assignments([ticketTypeId]);
    const set = (column: string, value: unknown) => update.set(column, value);
    if (valid.name !== undefined) set('name', valid.name);
    if (valid.description !== undefined) set('description', valid.description);
    if (valid.price !== undefined) {
      set('price_amount', valid.price.amount);
      set('price_currency', valid.price.currency);
    }
    const { quantity } = valid;
    if (quantity !== undefined) set('quantity', quantity);
    if (salesChange) {
      set('sales_start_at', start);
      set('sales_end_at', end);
    }
    if (changes.hidden != null) set('hidden', changes.hidden);
    if (limitsChange) {
      set('min_per_order', min);
      set('max_per_order', max);
    }
    const now = this.clock.now();
    set('updated_at', now);
    const { ticketTypes } = this.tables;
    const rows = await reader.changeEvent(current.eventId, async (tx, event) => {
      const [{ sold }] = (await tx.query(`SELECT sold FROM ticket_types WHERE id = $1`, [ticketTypeId])) as [{ sold: number }];
      if (quantity !== undefined && quantity < sold) {
        throw new EventError('QUANTITY_BELOW_SOLD', `${sold} tickets are already confirmed: the quantity cannot be lower.`, 'quantity');
      }
      await tx.query(`UPDATE ticket_types SET ${update.toSql()} WHERE id = $1`, update.params);
      if (quantity !== undefined) {
        const promoted = await this.waitlist.promote(tx, current.eventId, now);
        await this.outbox.emit(
          tx,
          promoted.map((p) => registrationEvent('registration.promoted', now, event!.organizerId, { ...p, eventId: current.eventId })),
        );
      }
      return (await tx.query(`SELECT ${ticketTypes.select} FROM ticket_types t WHERE t.id = $1`, [ticketTypeId])) as Record<
        string,
        unknown
      >[];
    });
    return ticketTypes.map(rows[0]!);
  }

  async delete(reader: EventsReader, ticketTypeId: string): Promise<void> {
    const current = await this.requireManageable(reader, ticketTypeId, 'delete this ticket type');
    await reader.changeEvent(current.eventId, async (tx) => {
      const used = (await tx.query(`SELECT 1 FROM registrations WHERE ticket_type_id = $1 LIMIT 1`, [ticketTypeId])) as unknown[];
      if (used.length)
        throw new EventError(
          'TICKET_TYPE_IN_USE',
          'People registered with this ticket type: hide it instead of deleting it.',
          'ticketTypeId',
        );
      await tx.query(`DELETE FROM ticket_types WHERE id = $1`, [ticketTypeId]);
    });
  }

  /** The ticket type, if the caller may see it (hidden ones: members only). */
  /** Within its sales window and not sold out, now. */
  isOnSale(ticketType: TicketType): boolean {
    return isOnSale(ticketType, this.clock.now());
  }

  async findVisible(reader: EventsReader, ticketTypeId: string): Promise<TicketType | null> {
    const ticketType = await reader.ticketTypes.load(ticketTypeId);
    if (!ticketType) return null;
    const event = await this.events.findVisible(reader, ticketType.eventId);
    if (!event) return null;
    return !ticketType.hidden || EventsPolicy.canSeeHiddenTicketTypes(await reader.role(event.organizerId)) ? ticketType : null;
  }

  /** The ticket types of an event the caller sees. */
  async visibleOfEvent(reader: EventsReader, event: { id: string; organizerId: string }): Promise<TicketType[]> {
    const [all, role] = await Promise.all([reader.ticketTypesOfEvent.load(event.id), reader.role(event.organizerId)]);
    return EventsPolicy.canSeeHiddenTicketTypes(role) ? all : all.filter((t) => !t.hidden);
  }

  private async requireManageable(reader: EventsReader, ticketTypeId: string, action: string): Promise<TicketType> {
    const ticketType = await this.findVisible(reader, ticketTypeId);
    if (!ticketType) throw EventError.notFound('TicketType', 'ticketTypeId');
    await this.events.requireManageable(reader, ticketType.eventId, action);
    return ticketType;
  }
}
