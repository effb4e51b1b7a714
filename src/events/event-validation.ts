import { checkAll } from '../errors/domain-error.js';
import { EventError } from './events.errors.js';
import type { EventFormatValue, Venue } from './events.model.js';

/** Checks of single input values, shared by every write path and edge. Each failure names its field. */

const SLUG = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const COUNTRY = /^[A-Z]{2}$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));

export const MAX_TICKET_TYPES_PER_EVENT = 30;
export const MAX_TICKETS_PER_ORDER = 20;

export function checkSlug(slug: string, maxLength: number, field = 'slug'): string {
  if (!SLUG.test(slug) || slug.length > maxLength) {
    throw new EventError(
      'INVALID_SLUG',
      `Slug must be lowercase letters, digits and single dashes, at most ${maxLength} characters.`,
      field,
    );
  }
  return slug;
}

/** A slug made from a title: "Rust & Coffee — Paris!" → "rust-coffee-paris". */
export function slugify(text: string, maxLength: number): string {
  const slug = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, maxLength)
    .replace(/-+$/, '');
  return slug || 'event';
}

export function checkText(
  value: string,
  {
    field,
    min,
    max,
    code,
    label,
  }: { field: string; min: number; max: number; code: 'INVALID_NAME' | 'INVALID_TITLE' | 'INVALID_DESCRIPTION'; label: string },
): string {
  const trimmed = min > 0 ? value.trim() : value;
  if (trimmed.length < min || trimmed.length > max) {
    throw new EventError(
      code,
      min > 0 ? `${label} must be ${min} to ${max} characters.` : `${label} must be at most ${max} characters.`,
      field,
    );
  }
  return trimmed;
}

export const checkName = (value: string, max: number): string =>
  checkText(value, { field: 'name', min: 1, max, code: 'INVALID_NAME', label: 'Name' });

export const checkTitle = (value: string): string =>
  checkText(value, { field: 'title', min: 1, max: 200, code: 'INVALID_TITLE', label: 'Title' });

export const checkDescription = (value: string, max: number): string =>
  checkText(value, { field: 'description', min: 0, max, code: 'INVALID_DESCRIPTION', label: 'Description' });

/** For partial updates: the check's result when the value was given, undefined (leave it alone) when not. */
export function ifGiven<V, R>(value: V | null | undefined, check: (value: V) => R): R | undefined {
  return value == null ? undefined : check(value);
}

/** An absolute http(s) URL; `httpsOnly` for addresses handed to attendees. */
export function checkUrl(value: string, field: string, { httpsOnly = false } = {}): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  const schemes = httpsOnly ? ['https:'] : ['http:', 'https:'];
  if (!url || !schemes.includes(url.protocol) || value.length > 2000) {
    throw new EventError('INVALID_URL', `Must be an absolute ${httpsOnly ? 'https' : 'http or https'} URL.`, field);
  }
  return value;
}

export function checkTimeZone(value: string, field = 'timeZone'): string {
  if (!isTimeZone(value)) {
    throw new EventError('INVALID_TIME_ZONE', 'Must be an IANA time zone such as Europe/Paris.', field);
  }
  return value;
}

// Intl.supportedValuesOf lists canonical names only; the formatter also knows aliases (Europe/Kyiv, UTC…).
function isTimeZone(value: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]{0,63}$/.test(value)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

export function checkTimeRange(startsAt: Date, endsAt: Date): void {
  if (endsAt.getTime() <= startsAt.getTime()) throw new EventError('INVALID_TIME_RANGE', 'The event must end after it starts.', 'endsAt');
}

export interface VenueInput {
  name: string;
  address?: string | null;
  city?: string | null;
  country?: string | null;
}

export function checkVenue(venue: VenueInput, field = 'venue'): Venue {
  const name = venue.name.trim();
  if (name.length < 1 || name.length > 200)
    throw new EventError('INVALID_VENUE', 'Venue name must be 1 to 200 characters.', `${field}.name`);
  for (const part of ['address', 'city'] as const) {
    if ((venue[part]?.length ?? 0) > 300)
      throw new EventError('INVALID_VENUE', `Venue ${part} must be at most 300 characters.`, `${field}.${part}`);
  }
  const country = venue.country ? venue.country.toUpperCase() : null;
  if (country !== null && !COUNTRY.test(country)) {
    throw new EventError('INVALID_COUNTRY', 'Country must be an ISO 3166-1 alpha-2 code such as FR.', `${field}.country`);
  }
  return { name, address: venue.address?.trim() || null, city: venue.city?.trim() || null, country };
}

export function checkPositiveInt(value: number, field: string, code: 'INVALID_CAPACITY' | 'INVALID_QUANTITY', label: string): number {
  if (!Number.isInteger(value) || value < 1 || value > 1_000_000)
    throw new EventError(code, `${label} must be a whole number from 1 to 1,000,000.`, field);
  return value;
}

export function checkPrice(amount: number, currency: string): { amount: number; currency: string } {
  if (!Number.isInteger(amount) || amount < 0 || amount > 100_000_000) {
    throw new EventError('INVALID_PRICE', 'Price must be a whole number of minor units from 0 to 100,000,000.', 'price.amount');
  }
  const code = currency.toUpperCase();
  if (!CURRENCIES.has(code)) throw new EventError('INVALID_CURRENCY', 'Currency must be an ISO 4217 code such as EUR.', 'price.currency');
  return { amount, currency: code };
}

export function checkOrderLimits(min: number, max: number): void {
  if (!Number.isInteger(min) || min < 1) throw new EventError('INVALID_ORDER_LIMITS', 'minPerOrder must be at least 1.', 'minPerOrder');
  if (!Number.isInteger(max) || max < min || max > MAX_TICKETS_PER_ORDER) {
    throw new EventError('INVALID_ORDER_LIMITS', `maxPerOrder must be between minPerOrder and ${MAX_TICKETS_PER_ORDER}.`, 'maxPerOrder');
  }
}

export function checkSalesWindow(start: Date | null, end: Date | null): void {
  if (start && end && end.getTime() <= start.getTime()) {
    throw new EventError('INVALID_SALES_WINDOW', 'Sales must close after they open.', 'salesEndAt');
  }
}

export interface AttendeeInput {
  name: string;
  email: string;
}

export function checkAttendees(attendees: AttendeeInput[], limits: { minPerOrder: number; maxPerOrder: number }): AttendeeInput[] {
  if (attendees.length < limits.minPerOrder || attendees.length > limits.maxPerOrder) {
    throw new EventError(
      'INVALID_ATTENDEES',
      `This ticket type is sold ${limits.minPerOrder} to ${limits.maxPerOrder} per registration: give that many attendees.`,
      'attendees',
    );
  }
  // Every attendee's every field is checked, so a form shows all its mistakes at once.
  const checked = checkAll(Object.fromEntries(attendees.map((attendee, i) => [i, () => checkAttendee(attendee, i)])));
  return attendees.map((_, i) => checked[i]!);
}

function checkAttendee(attendee: AttendeeInput, i: number): AttendeeInput {
  return checkAll({
    name: () => {
      const name = attendee.name.trim();
      if (name.length < 1 || name.length > 200)
        throw new EventError('INVALID_NAME', 'Attendee name must be 1 to 200 characters.', `attendees.${i}.name`);
      return name;
    },
    email: () => {
      const email = attendee.email.trim();
      if (email.length > 254 || !EMAIL.test(email))
        throw new EventError('INVALID_EMAIL', 'Attendee email must be an email address.', `attendees.${i}.email`);
      return email;
    },
  });
}

/** What publication needs beyond valid fields: a place to be, and a way in. */
export function missingForPublication(
  event: { format: EventFormatValue; venue: Venue | null; onlineUrl: string | null },
  ticketTypes: number,
): EventError | null {
  if (event.format !== 'online' && !event.venue)
    return new EventError('EVENT_INCOMPLETE', 'An in-person or hybrid event needs a venue before it is published.', 'venue');
  if (event.format !== 'in_person' && !event.onlineUrl)
    return new EventError('EVENT_INCOMPLETE', 'An online or hybrid event needs an online URL before it is published.', 'onlineUrl');
  if (ticketTypes === 0) return new EventError('EVENT_INCOMPLETE', 'Add at least one ticket type before publishing.', 'ticketTypes');
  return null;
}
