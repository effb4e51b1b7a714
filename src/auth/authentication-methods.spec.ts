import { acrOf, acrSatisfies, combineAmr, toAmr } from './authentication-methods.js';

describe('authentication methods', () => {
  it('a password alone is one factor', () => {
    expect(combineAmr(['pwd'])).toEqual(['pwd']);
    expect(acrOf(['pwd'])).toBe('aal1');
  });

  it('a password and a code are two factors', () => {
    const amr = combineAmr(['pwd'], ['otp']);
    expect(amr).toEqual(['pwd', 'otp', 'mfa']);
    expect(acrOf(amr)).toBe('aal2');
  });

  it('a passkey that verified its user is multi-factor and phishing-resistant, alone or after a password', () => {
    expect(combineAmr(['swk'])).toEqual(['swk', 'mfa']);
    expect(combineAmr(['pwd'], ['hwk'])).toEqual(['pwd', 'hwk', 'mfa']);
    expect(acrOf(['hwk', 'mfa'])).toBe('phr');
  });

  it('does not repeat methods or count mfa as a factor', () => {
    expect(combineAmr(['pwd', 'mfa'], ['pwd'])).toEqual(['pwd']);
  });

  it('orders classes: phr meets aal2, aal1 does not', () => {
    expect(acrSatisfies('phr', 'aal2')).toBe(true);
    expect(acrSatisfies('aal2', 'phr')).toBe(false);
    expect(acrSatisfies('aal1', 'aal2')).toBe(false);
    expect(acrSatisfies('aal2', 'aal1')).toBe(true);
  });

  it('keeps only known methods read back', () => {
    expect(toAmr(['pwd', 'nope', 'otp'])).toEqual(['pwd', 'otp']);
    expect(toAmr(null)).toEqual([]);
  });
});
