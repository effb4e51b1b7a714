import type { CredentialChangeListener } from '../auth/credential-change.listener.js';
import { Clock } from '../clock/clock.js';
import { LISTING_CHANNEL, LISTING_STALENESS_MS, MAX_LISTINGS_WEIGHT, PublicListingCache } from './public-listing-cache.js';

class StillClock extends Clock {
  at = 1_000_000;
  now(): Date {
    return new Date(this.at);
  }
}

function setUp() {
  const clock = new StillClock();
  const heard = new Map<string, (payload: string) => void>();
  const announced: string[] = [];
  const listener = {
    hear: (channel: string, handler: (payload: string) => void) => heard.set(channel, handler),
    announce: (channel: string) => announced.push(channel),
  } as unknown as CredentialChangeListener;
  return { clock, heard, announced, cache: new PublicListingCache(clock, listener) };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('PublicListingCache', () => {
  it('reads a page once within the bound, again after it', async () => {
    const { clock, cache } = setUp();
    let reads = 0;
    const read = async () => ++reads;
    expect(await cache.get('p', read, () => 1)).toBe(1);
    clock.at += LISTING_STALENESS_MS - 1;
    expect(await cache.get('p', read, () => 1)).toBe(1);
    clock.at += 1;
    expect(await cache.get('p', read, () => 1)).toBe(2);
  });

  it('drops the oldest pages once what they weigh passes the cap', async () => {
    const { cache } = setUp();
    const half = Math.floor(MAX_LISTINGS_WEIGHT / 2) + 1;
    await cache.get(
      'a',
      async () => 'a',
      () => half,
    );
    await settled();
    await cache.get(
      'b',
      async () => 'b',
      () => half,
    );
    await settled();
    expect(cache.size).toEqual({ listings: 1, weight: half });
    let reads = 0;
    await cache.get(
      'a',
      async () => ++reads,
      () => 1,
    );
    expect(reads).toBe(1);
  });

  it('keeps no failed read', async () => {
    const { cache } = setUp();
    await expect(
      cache.get(
        'p',
        () => Promise.reject(new Error('down')),
        () => 1,
      ),
    ).rejects.toThrow('down');
    await settled();
    expect(cache.size.listings).toBe(0);
  });

  it('announces its own changes, and forgets everything on hearing another instance’s', async () => {
    const { cache, heard, announced } = setUp();
    await cache.get(
      'p',
      async () => 1,
      () => 10,
    );
    cache.changed();
    expect(announced).toEqual([LISTING_CHANNEL]);
    expect(cache.size).toEqual({ listings: 0, weight: 0 });
    await cache.get(
      'p',
      async () => 1,
      () => 10,
    );
    heard.get(LISTING_CHANNEL)!('4242');
    expect(cache.size).toEqual({ listings: 0, weight: 0 });
    expect(announced).toHaveLength(1);
  });
});
