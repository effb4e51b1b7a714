import { addressKey, networkKey } from './rate-limits.service.js';

describe('addressKey (the anonymous budget of an address)', () => {
  it('keys an IPv4 address by itself, also when it arrives IPv4-mapped', () => {
    expect(addressKey('203.0.113.7')).toBe('203.0.113.7');
    expect(addressKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(addressKey('203.0.113.8')).not.toBe(addressKey('203.0.113.7'));
  });

  it('keys an IPv6 address by its /64, however it is written', () => {
    expect(addressKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:0db8:0001:0002:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressKey('2001:db8:1:3::1')).not.toBe(addressKey('2001:db8:1:2::1'));
  });

  it('puts whatever is not an address (a forged proxy header) in one shared budget', () => {
    expect(addressKey('')).toBe('invalid');
    expect(addressKey('not-an-ip')).toBe('invalid');
    expect(addressKey('x'.repeat(10_000))).toBe('invalid');
  });
});

describe('networkKey (one actor at dynamic client registration)', () => {
  it('keys an IPv4 address by its /24, so 127.0.0.1 to 127.0.0.255 are one network', () => {
    expect(networkKey('127.0.0.1')).toBe('127.0.0.0/24');
    expect(networkKey('127.0.0.52')).toBe('127.0.0.0/24');
    expect(networkKey('::ffff:127.0.0.200')).toBe('127.0.0.0/24');
    expect(networkKey('127.0.1.1')).toBe('127.0.1.0/24');
  });

  it('keys an IPv6 address by its /48, however it is written', () => {
    expect(networkKey('2001:db8:1:2::1')).toBe('2001:db8:1::/48');
    expect(networkKey('2001:0db8:0001:ffff:ffff:ffff:ffff:ffff')).toBe('2001:db8:1::/48');
    expect(networkKey('2001:db8:2::1')).not.toBe(networkKey('2001:db8:1::1'));
  });

  it('puts whatever is not an address in one shared network', () => {
    expect(networkKey('not-an-ip')).toBe('invalid');
  });
});
