import { Injectable } from '@nestjs/common';
import type { PageRequest } from '../database/keyset.js';
import type { Organizer, TicketType } from './events.model.js';
import type { EventsReader } from './events.reader.js';
import { EventFilter, EventList, EventsService, OrderDirection } from './events.service.js';
import { PublicListingCache } from './public-listing-cache.js';

/** A page of the public listing with what its events show of their organizers and ticket types. */
interface Listing extends EventList {
  organizers: Organizer[];
  ticketTypes: Map<string, TicketType[]>;
}

/**
 * The public listing for callers without an account, from PublicListingCache: the page, its events'
 * organizers and their ticket types are read together (three statements) and kept, and each request's
 * reader is primed with them, so the page's field resolvers read nothing. Signed-in callers read the
 * listing themselves (EventsService.list): they see their own changes on every instance.
 */
@Injectable()
export class AnonymousListings {
  constructor(
    private readonly events: EventsService,
    private readonly cache: PublicListingCache,
  ) {}

  async page(reader: EventsReader, filter: EventFilter, direction: OrderDirection, request: PageRequest): Promise<EventList> {
    const listing = await this.cache.get(
      listingKey(filter, direction, request),
      () => this.read(reader, filter, direction, request),
      weigh,
    );
    for (const organizer of listing.organizers) reader.organizers.prime(organizer.id, organizer);
    for (const [eventId, ticketTypes] of listing.ticketTypes) reader.ticketTypesOfEvent.prime(eventId, ticketTypes);
    return listing;
  }

  private async read(reader: EventsReader, filter: EventFilter, direction: OrderDirection, request: PageRequest): Promise<Listing> {
    const { page, totalCount } = await this.events.list(filter, direction, request);
    const events = page.items.map((item) => item.node);
    const [organizers, ticketTypes] = await Promise.all([
      reader.organizers.loadMany([...new Set(events.map((e) => e.organizerId))]),
      reader.ticketTypesOfEvent.loadMany(events.map((e) => e.id)),
    ]);
    const failed = [...organizers, ...ticketTypes].find((result) => result instanceof Error);
    if (failed) throw failed;
    let count: Promise<number> | undefined;
    return {
      page,
      // Counted once per kept listing, when first asked.
      totalCount: () => {
        if (!count) {
          count = totalCount();
          count.catch(() => (count = undefined));
        }
        return count;
      },
      organizers: (organizers as (Organizer | null)[]).filter((o): o is Organizer => o !== null),
      ticketTypes: new Map(events.map((e, i) => [e.id, ticketTypes[i] as TicketType[]])),
    };
  }
}

/**
 * One key for the arguments that select the same rows, as EventsService.list reads them: the slug in
 * lower case, the search trimmed, a blank one none.
 */
export function listingKey(filter: EventFilter, direction: OrderDirection, request: PageRequest): string {
  const { startsAfter, startsBefore } = filter;
  const organizerSlug = filter.organizerSlug ? filter.organizerSlug.toLowerCase() : null;
  const search = filter.search?.trim() || null;
  const { first, last, after, before } = request;
  return JSON.stringify([startsAfter ?? null, startsBefore ?? null, organizerSlug, search, direction, [first, last, after, before]]);
}

/** About the bytes a kept listing holds: its rows' text (descriptions run to 20,000 characters) and a little per value. */
function weigh(listing: Listing): number {
  let weight = 0;
  for (const { node } of listing.page.items) weight += roughSize(node);
  for (const organizer of listing.organizers) weight += roughSize(organizer);
  for (const ticketTypes of listing.ticketTypes.values()) for (const ticketType of ticketTypes) weight += roughSize(ticketType);
  return weight;
}

function roughSize(row: object): number {
  let size = 64;
  for (const value of Object.values(row)) {
    if (typeof value === 'string') size += 40 + value.length * 2;
    else if (value && typeof value === 'object' && !(value instanceof Date)) size += roughSize(value);
    else size += 16;
  }
  return size;
}
