import { checkAttendees, checkPrice, checkTimeZone, checkUrl, checkVenue, missingForPublication, slugify } from './event-validation.js';
import { EventError } from './events.errors.js';
import { EventsPolicy } from './events.policy.js';

const fieldOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (err) {
    if (err instanceof EventError) return `${err.code}@${err.field}`;
    throw err;
  }
  return undefined;
};

describe('event input checks', () => {
  it('makes slugs from titles in any script it can transliterate', () => {
    expect(slugify('Rust & Coffee — Été 2030!', 80)).toBe('rust-coffee-ete-2030');
    expect(slugify('日本語', 80)).toBe('event');
    expect(slugify('a'.repeat(100), 10)).toBe('aaaaaaaaaa');
  });

  it('accepts IANA zones and refuses made-up ones', () => {
    for (const zone of ['America/Argentina/Buenos_Aires', 'Europe/Kyiv', 'Europe/Kiev', 'UTC', 'Asia/Kolkata'])
      expect(checkTimeZone(zone)).toBe(zone);
    expect(fieldOf(() => checkTimeZone('Europe/Atlantis'))).toBe('INVALID_TIME_ZONE@timeZone');
  });

  it('wants https for online URLs, and no script URLs anywhere', () => {
    expect(fieldOf(() => checkUrl('http://meet.example.com', 'onlineUrl', { httpsOnly: true }))).toBe('INVALID_URL@onlineUrl');
    expect(fieldOf(() => checkUrl('javascript:alert(1)', 'websiteUrl'))).toBe('INVALID_URL@websiteUrl');
    expect(checkUrl('https://example.com/x', 'websiteUrl')).toBe('https://example.com/x');
  });

  it('normalises venue countries and points at the bad nested field', () => {
    expect(checkVenue({ name: ' Hall ', country: 'fr' })).toEqual({ name: 'Hall', address: null, city: null, country: 'FR' });
    expect(fieldOf(() => checkVenue({ name: 'Hall', country: 'FRA' }))).toBe('INVALID_COUNTRY@venue.country');
  });

  it('takes prices in minor units of a real currency', () => {
    expect(checkPrice(0, 'eur')).toEqual({ amount: 0, currency: 'EUR' });
    expect(fieldOf(() => checkPrice(12.5, 'EUR'))).toBe('INVALID_PRICE@price.amount');
    expect(fieldOf(() => checkPrice(100, 'XYZ1'))).toBe('INVALID_CURRENCY@price.currency');
  });

  it('counts attendees against the per-order limits and checks each one', () => {
    const limits = { minPerOrder: 2, maxPerOrder: 3 };
    const ada = { name: 'Ada', email: 'ada@example.com' };
    expect(fieldOf(() => checkAttendees([ada], limits))).toBe('INVALID_ATTENDEES@attendees');
    expect(fieldOf(() => checkAttendees([ada, { name: 'Bob', email: 'bob' }], limits))).toBe('INVALID_EMAIL@attendees.1.email');
    expect(checkAttendees([ada, { name: ' Bob ', email: 'bob@example.com' }], limits)[1]).toEqual({
      name: 'Bob',
      email: 'bob@example.com',
    });
  });

  it('names what an event lacks before publication', () => {
    const venue = { name: 'Hall', address: null, city: null, country: null };
    expect(missingForPublication({ format: 'hybrid', venue, onlineUrl: null }, 1)?.field).toBe('onlineUrl');
    expect(missingForPublication({ format: 'in_person', venue: null, onlineUrl: null }, 1)?.field).toBe('venue');
    expect(missingForPublication({ format: 'online', venue: null, onlineUrl: 'https://x.example' }, 0)?.field).toBe('ticketTypes');
    expect(missingForPublication({ format: 'online', venue: null, onlineUrl: 'https://x.example' }, 1)).toBeNull();
  });
});

describe('events policy', () => {
  it('shows drafts and private events to members only', () => {
    expect(EventsPolicy.canView({ status: 'draft', visibility: 'public' }, null)).toBe(false);
    expect(EventsPolicy.canView({ status: 'published', visibility: 'private' }, null)).toBe(false);
    expect(EventsPolicy.canView({ status: 'published', visibility: 'private' }, 'check_in_staff')).toBe(true);
    expect(EventsPolicy.canView({ status: 'cancelled', visibility: 'unlisted' }, null)).toBe(true);
  });

  it('lets admins assign every role but owner', () => {
    expect(EventsPolicy.canAssignRole('admin', 'check_in_staff')).toBe(true);
    expect(EventsPolicy.canAssignRole('admin', 'owner')).toBe(false);
    expect(EventsPolicy.canAssignRole('owner', 'owner')).toBe(true);
    expect(EventsPolicy.canAssignRole('check_in_staff', 'check_in_staff')).toBe(false);
  });
});
