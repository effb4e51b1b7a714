import { Injectable } from '@nestjs/common';
import { CredentialChangeListener } from '../auth/credential-change.listener.js';
import { Clock } from '../clock/clock.js';

/**
 * The longest an anonymous caller can be shown the public listing as it was before a change made on
 * another instance whose notification did not arrive (docs/operations.md). On the instance that made
 * it, never: its reader forgets every cached page as it commits, before the change is answered.
 */
export const LISTING_STALENESS_MS = 1_000;
/** Where an instance that changed something tells the others to forget their pages (payload: its listener's pid). */
export const LISTING_CHANNEL = 'agora_listings';
/** Distinct listings (filters, orders, pages) kept at once; the oldest goes first. */
const MAX_LISTINGS = 100;
/** What the kept listings may weigh together, as `weigh` estimates it (about bytes); the oldest go first. */
export const MAX_LISTINGS_WEIGHT = 16 * 1024 * 1024;

interface Entry {
  /** When the listing's reads began, on the clock (their snapshot is no older). */
  since: number;
  listing: Promise<unknown>;
  /** Known once the listing is read. */
  weight: number;
}

/**
 * Pages of the public listing as anonymous callers see them (AnonymousListings), kept for at most
 * LISTING_STALENESS_MS: everyone without an account sees the same page for the same arguments, so one
 * instance reads it once for all of them, and then answers from memory.
 *
 * Freshness: every change to an event, the rows under it (ticket types, registrations, hence the seat
 * counts) or an organizer goes through an EventsReader, which calls `changed()` once it has committed
 * and before the change is answered (not for a change that alters nothing listed: a registration put
 * on the waitlist, a check-in); that empties the cache, reads in flight included, so this instance
 * never answers from before a change it made. It also tells the other instances, on LISTING_CHANNEL
 * through the credential listener's connection (CredentialChangeListener.announce), and they empty
 * theirs as they hear it. A notification lost (a listener reconnecting, AUTH_CACHE_TTL_SECONDS=0, which
 * runs no listener) and a change made outside a reader (the CLI, SQL by hand) are seen within
 * LISTING_STALENESS_MS, since no page is kept longer than that after its reads began.
 */
@Injectable()
export class PublicListingCache {
  /** In the order they were read, which is that of `since` while the clock goes forward. */
  private readonly entries = new Map<string, Entry>();
  private weight = 0;

  constructor(
    private readonly clock: Clock,
    private readonly listener: CredentialChangeListener,
  ) {
    listener.hear(LISTING_CHANNEL, () => this.forget());
  }

  /**
   * The listing kept under `key`, or the one `read` gives, kept from now; `weigh` estimates what a read
   * listing holds in memory (about bytes).
   */
  get<T>(key: string, read: () => Promise<T>, weigh: (listing: T) => number): Promise<T> {
    const now = this.clock.now().getTime();
    this.sweep(now);
    const entry = this.entries.get(key);
    if (entry && !this.expired(entry, now)) return entry.listing as Promise<T>;
    if (entry) this.drop(key, entry);
    const fresh: Entry = { since: now, listing: read(), weight: 0 };
    if (this.entries.size >= MAX_LISTINGS) this.dropOldest();
    this.entries.set(key, fresh);
    (fresh.listing as Promise<T>).then(
      (listing) => {
        if (this.entries.get(key) !== fresh) return;
        fresh.weight = weigh(listing);
        this.weight += fresh.weight;
        while (this.weight > MAX_LISTINGS_WEIGHT && this.entries.size > 0) this.dropOldest();
      },
      () => {
        if (this.entries.get(key) === fresh) this.drop(key, fresh);
      },
    );
    return fresh.listing as Promise<T>;
  }

  /**
   * Forgets every listing, those being read included, and tells the other instances to: called after a
   * change commits, before it is answered.
   */
  changed(): void {
    this.forget();
    this.listener.announce(LISTING_CHANNEL);
  }

  /** What the kept listings weigh, as estimated (for tests and metrics). */
  get size(): { listings: number; weight: number } {
    return { listings: this.entries.size, weight: this.weight };
  }

  private forget(): void {
    this.entries.clear();
    this.weight = 0;
  }

  // A clock that went back makes an entry as doubtful as an old one.
  private expired(entry: Entry, now: number): boolean {
    return now < entry.since || now - entry.since >= LISTING_STALENESS_MS;
  }

  /** Drops the expired listings from the oldest on, so that none outlives its bound in memory. */
  private sweep(now: number): void {
    for (const [key, entry] of this.entries) {
      if (!this.expired(entry, now)) break;
      this.drop(key, entry);
    }
  }

  private dropOldest(): void {
    const [key, entry] = this.entries.entries().next().value!;
    this.drop(key, entry);
  }

  private drop(key: string, entry: Entry): void {
    this.entries.delete(key);
    this.weight -= entry.weight;
  }
}
