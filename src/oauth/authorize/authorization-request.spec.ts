import { requestedAcr } from './authorization-request.js';

describe('requestedAcr (acr_values)', () => {
  it('takes the weakest value Agora knows, whatever the order of preference', () => {
    expect(requestedAcr('phr aal2')).toBe('aal2');
    expect(requestedAcr('aal2 phr')).toBe('aal2');
    expect(requestedAcr('phr')).toBe('phr');
    expect(requestedAcr('aal1 phr')).toBe('aal1');
  });

  it('ignores values it does not know, and answers nothing when none is known', () => {
    expect(requestedAcr('urn:example:loa:3 aal2')).toBe('aal2');
    expect(requestedAcr('urn:example:loa:3')).toBeUndefined();
    expect(requestedAcr('')).toBeUndefined();
    expect(requestedAcr(null)).toBeUndefined();
    expect(requestedAcr('AAL2')).toBeUndefined();
  });

  it('reads values separated by several spaces', () => {
    expect(requestedAcr('  phr   aal2 ')).toBe('aal2');
  });
});
