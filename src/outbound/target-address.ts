import ipaddr from 'ipaddr.js';

// What a non-public range is called in a refusal ("10.0.0.1 is a private address"). ipaddr.js names
// the ranges; everything but 'unicast' is refused.
const RANGE_WORDS: Record<string, string> = {
  unspecified: 'an unspecified address',
  broadcast: 'a broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address',
  loopback: 'a loopback address',
  carrierGradeNat: 'a carrier-grade NAT address',
  private: 'a private address',
  reserved: 'a reserved address',
  benchmarking: 'a benchmarking address',
  amt: 'a multicast tunnelling (AMT) address',
  as112: 'an AS112 address',
  as112v6: 'an AS112 address',
  uniqueLocal: 'a unique local address',
  ipv4Mapped: 'an IPv4-mapped address',
  rfc6145: 'an IPv4-translated address',
  rfc6052: 'a local-use NAT64 address',
  '6to4': 'a 6to4 address',
  teredo: 'a Teredo address',
  orchid2: 'an ORCHID address',
  droneRemoteIdProtocolEntityTags: 'a drone remote ID address',
  deprecatedSiteLocal: 'a site-local address',
  deprecatedOrchid: 'an ORCHID address',
  discard: 'a discard-only address',
  segmentRouting: 'a segment routing address',
};

const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');
const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR('64:ff9b::/96');

/**
 * Why a webhook may not connect to this IP address, or null when it is public: an IPv4 address in
 * ipaddr.js's 'unicast' range, or an IPv6 address that is 'unicast' and in global unicast space
 * (2000::/3). Everything else is refused: loopback, private, link-local (cloud metadata at
 * 169.254.169.254), carrier-grade NAT, multicast, broadcast, unspecified, documentation, benchmarking
 * and reserved ranges, unique local, IPv4-compatible (`::a.b.c.d`), 6to4, Teredo.
 *
 * IPv4-mapped addresses (`::ffff:127.0.0.1`, `::ffff:7f00:1`) are judged by the IPv4 address they carry.
 * So are NAT64 addresses of the well-known prefix (64:ff9b::/96): a DNS64 resolver on an IPv6-only host
 * answers them for every public IPv4 name, and the gateway reaches exactly that IPv4 address, so
 * `64:ff9b::808:808` is allowed and `64:ff9b::a00:1` (10.0.0.1) is not.
 */
export function addressProblem(address: string): string | null {
  if (!ipaddr.isValid(address)) return `${address} is not an IP address`;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv4') return ipv4Problem(address, parsed as ipaddr.IPv4);
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return ipv4Problem(address, v6.toIPv4Address());
  if (v6.match(NAT64_WELL_KNOWN)) return ipv4Problem(address, ipaddr.IPv4.parse(embeddedIpv4(v6)));
  const range = v6.range();
  if (range !== 'unicast') return `${address} is ${RANGE_WORDS[range] ?? 'not a public address'}`;
  if (!v6.match(GLOBAL_UNICAST_V6)) {
    const compatible = v6.parts.slice(0, 6).every((part) => part === 0);
    return compatible ? `${address} is an IPv4-compatible address` : `${address} is not a global unicast address`;
  }
  return null;
}

function ipv4Problem(written: string, v4: ipaddr.IPv4): string | null {
  const range = v4.range();
  if (range === 'unicast') return null;
  const shown = written === v4.toString() ? written : `${written} (${v4.toString()})`;
  return `${shown} is ${RANGE_WORDS[range] ?? 'not a public address'}`;
}

/** The IPv4 address in the last 32 bits of an IPv6 address. */
function embeddedIpv4(v6: ipaddr.IPv6): string {
  const [high, low] = v6.parts.slice(6) as [number, number];
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

// Cloud metadata services (AWS, GCP, Azure, OpenStack: 169.254.169.254; AWS ECS task credentials:
// 169.254.170.2; AWS over IPv6: fd00:ec2::254). They hand out the host's credentials to anyone who asks:
// refused even where the operator allows private targets.
const METADATA_ADDRESSES = new Set(['169.254.169.254', '169.254.170.2', 'fd00:ec2::254']);

/** Why a webhook may never connect to this address, whatever the operator allows: a cloud metadata service. */
export function metadataProblem(address: string): string | null {
  if (!ipaddr.isValid(address)) return null;
  const parsed = ipaddr.parse(address);
  let plain = parsed.toString();
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) plain = v6.toIPv4Address().toString();
    else if (v6.match(NAT64_WELL_KNOWN)) plain = embeddedIpv4(v6);
  }
  return METADATA_ADDRESSES.has(plain) ? `${address} is a cloud metadata address` : null;
}
