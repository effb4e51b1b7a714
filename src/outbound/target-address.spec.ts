import { addressProblem } from './target-address.js';

describe('addressProblem', () => {
  it.each([
    // IPv4 unicast
    '1.1.1.1',
    '8.8.8.8',
    '93.184.215.14',
    '100.63.255.255', // just below carrier-grade NAT
    '100.128.0.0', // just above it
    '172.15.255.255', // just below 172.16/12
    '172.32.0.0', // just above it
    '192.167.255.255',
    '192.169.0.0',
    '169.253.255.255',
    '223.255.255.255',
    // IPv6 global unicast
    '2606:4700:4700::1111',
    '2a00:1450:4001:82a::200e',
    '2001:4860:4860::8888',
    // IPv4-mapped and NAT64 (well-known prefix) forms of public IPv4 addresses
    '::ffff:8.8.8.8',
    '::ffff:808:808',
    '64:ff9b::808:808',
    '64:ff9b::1.1.1.1',
  ])('allows the public address %s', (address) => {
    expect(addressProblem(address)).toBeNull();
  });

  it.each([
    // IPv4
    ['0.0.0.0', 'an unspecified address'],
    ['0.1.2.3', 'an unspecified address'],
    ['127.0.0.1', 'a loopback address'],
    ['127.255.255.254', 'a loopback address'],
    ['10.0.0.1', 'a private address'],
    ['10.255.255.255', 'a private address'],
    ['172.16.0.1', 'a private address'],
    ['172.31.255.255', 'a private address'],
    ['192.168.1.1', 'a private address'],
    ['169.254.169.254', 'a link-local address'],
    ['169.254.0.1', 'a link-local address'],
    ['100.64.0.1', 'a carrier-grade NAT address'],
    ['100.127.255.255', 'a carrier-grade NAT address'],
    ['224.0.0.1', 'a multicast address'],
    ['239.255.255.250', 'a multicast address'],
    ['255.255.255.255', 'a broadcast address'],
    ['240.0.0.1', 'a reserved address'],
    ['192.0.0.8', 'a reserved address'],
    ['192.0.2.1', 'a reserved address'], // documentation
    ['198.51.100.7', 'a reserved address'], // documentation
    ['203.0.113.9', 'a reserved address'], // documentation
    ['198.18.0.1', 'a reserved address'], // benchmarking
    ['198.19.255.255', 'a reserved address'], // benchmarking
    ['192.88.99.1', 'a reserved address'], // 6to4 relay anycast
    // IPv6
    ['::', 'an unspecified address'],
    ['::1', 'a loopback address'],
    ['fe80::1', 'a link-local address'],
    ['fe80::1%eth0', 'a link-local address'],
    ['febf::1', 'a link-local address'],
    ['fc00::1', 'a unique local address'],
    ['fd00::2', 'a unique local address'],
    ['fd00:ec2::254', 'a unique local address'], // the AWS metadata service over IPv6
    ['ff02::1', 'a multicast address'],
    ['ff05::1:3', 'a multicast address'],
    ['fec0::1', 'a site-local address'],
    ['100::1', 'a discard-only address'],
    ['2001:db8::1', 'a reserved address'], // documentation
    ['3fff::1', 'a reserved address'], // documentation
    ['2001:2::1', 'a benchmarking address'],
    ['2001::1', 'a Teredo address'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'a Teredo address'],
    ['2002:a00:1::1', 'a 6to4 address'], // 6to4 of 10.0.0.1
    ['2002:7f00:1::', 'a 6to4 address'], // 6to4 of 127.0.0.1
    ['2002:808:808::1', 'a 6to4 address'],
    ['64:ff9b:1::a00:1', 'a local-use NAT64 address'],
    ['::ffff:0:7f00:1', 'an IPv4-translated address'],
    ['5f00::1', 'a segment routing address'],
    ['::7f00:1', 'an IPv4-compatible address'], // ::127.0.0.1
    ['::a00:1', 'an IPv4-compatible address'], // ::10.0.0.1
    ['::808:808', 'an IPv4-compatible address'],
    ['4000::1', 'not a global unicast address'],
  ])('refuses %s as %s', (address, words) => {
    expect(addressProblem(address)).toBe(`${address} is ${words}`);
  });

  it.each([
    ['::ffff:127.0.0.1', '127.0.0.1', 'a loopback address'],
    ['::ffff:7f00:1', '127.0.0.1', 'a loopback address'],
    ['::ffff:10.0.0.1', '10.0.0.1', 'a private address'],
    ['::ffff:a9fe:a9fe', '169.254.169.254', 'a link-local address'],
    ['::ffff:0.0.0.0', '0.0.0.0', 'an unspecified address'],
    ['64:ff9b::a00:1', '10.0.0.1', 'a private address'],
    ['64:ff9b::127.0.0.1', '127.0.0.1', 'a loopback address'],
    ['64:ff9b::a9fe:a9fe', '169.254.169.254', 'a link-local address'],
  ])('judges %s by the IPv4 address it carries (%s)', (address, v4, words) => {
    expect(addressProblem(address)).toBe(`${address} (${v4}) is ${words}`);
  });

  it.each(['example.com', '', '127.1.1.1.1', '::g', '[::1]'])('refuses %j, which is not an address', (text) => {
    expect(addressProblem(text)).toBe(`${text} is not an IP address`);
  });
});
