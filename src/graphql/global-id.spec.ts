import { fromGlobalId, idOfType, toGlobalId } from './global-id.js';

const ID = '0b6f7c3e-2f64-4a0b-9d1e-3f4a5b6c7d8e';

describe('global IDs', () => {
  it('encode the type with the id, opaquely, and decode back', () => {
    const globalId = toGlobalId('Event', ID);
    expect(globalId).not.toContain(ID);
    expect(fromGlobalId(globalId)).toEqual({ type: 'Event', id: ID });
    expect(idOfType(globalId, 'Event')).toBe(ID);
  });

  it('do not stand for another type', () => {
    expect(idOfType(toGlobalId('Organizer', ID), 'Event')).toBeNull();
  });

  it.each([
    ['a raw uuid', ID],
    ['an unknown type', Buffer.from(`User:${ID}`).toString('base64url')],
    ['a malformed id', Buffer.from('Event:1 OR 1=1').toString('base64url')],
    ['padding characters', 'RXZlbnQ6=='],
    ['an extra part', Buffer.from(`Event:${ID}:x`).toString('base64url')],
  ])('refuse %s', (_label, value) => {
    expect(fromGlobalId(value)).toBeNull();
  });
});
