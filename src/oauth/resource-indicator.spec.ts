import { audienceIncludesAgora, isAgorasResource, narrowResources, parseResourceIndicator } from './resource-indicator.js';

const API = 'https://agora.example';
const RS = 'https://billing.example';

describe('isAgorasResource (RFC 8707)', () => {
  it.each([API, `${API}/`, `${API}/graphql`, `${API}/api/v4/events`])('accepts %s', (resource) => {
    expect(isAgorasResource(parseResourceIndicator(resource), API)).toBe(true);
  });

  it.each(['https://other.example', 'http://agora.example', 'https://agora.example:8443', `${API}/graphql?x=1`])(
    'is not %s',
    (resource) => {
      expect(isAgorasResource(parseResourceIndicator(resource), API)).toBe(false);
    },
  );

  it.each([`${API}#x`, 'not a uri', ''])('refuses %s with invalid_target', (resource) => {
    expect(() => parseResourceIndicator(resource)).toThrow(expect.objectContaining({ code: 'invalid_target' }));
  });

  it('keeps to the path of an identifier that has one', () => {
    const is = (r: string) => isAgorasResource(new URL(r), 'https://host.example/agora');
    expect(is('https://host.example/agora/graphql')).toBe(true);
    expect(is('https://host.example/agoraX')).toBe(false);
    expect(is('https://host.example/')).toBe(false);
  });
});

describe('narrowResources (RFC 8707 §2.2)', () => {
  it('gives every authorized resource when none is asked for', () => {
    expect(narrowResources([API, RS], [], API)).toEqual([API, RS]);
    expect(narrowResources([], [], API)).toEqual([]);
  });

  it('narrows to a subset, and takes Agora as what an empty authorization means', () => {
    expect(narrowResources([API, RS], [RS], API)).toEqual([RS]);
    expect(narrowResources([], [API], API)).toEqual([API]);
  });

  it('refuses a resource that was not authorized with invalid_target', () => {
    expect(() => narrowResources([API], [RS], API)).toThrow(expect.objectContaining({ code: 'invalid_target' }));
    expect(() => narrowResources([], [RS], API)).toThrow(expect.objectContaining({ code: 'invalid_target' }));
    expect(() => narrowResources([RS], [API], API)).toThrow(expect.objectContaining({ code: 'invalid_target' }));
  });
});

describe('audienceIncludesAgora', () => {
  it('is true for the tokens of before (no audience) and those naming Agora', () => {
    expect(audienceIncludesAgora([], API)).toBe(true);
    expect(audienceIncludesAgora([RS, API], API)).toBe(true);
    expect(audienceIncludesAgora([RS], API)).toBe(false);
  });
});
