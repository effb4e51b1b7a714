import type { LookupAddress } from 'node:dns';
import { lookup, Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import { addressProblem, metadataProblem } from './target-address.js';
import { urlHost, urlProblem, type TargetPolicy } from './target-url.js';

/**
 * Every address of a name. `signal` aborts at the attempt's deadline: a resolver that can stops its
 * queries then (the promise may reject or never settle; nobody waits for it).
 */
export type ResolveHost = (hostname: string, signal: AbortSignal) => Promise<LookupAddress[]>;

/**
 * The system resolver (getaddrinfo: /etc/hosts, then DNS), for on-premise receivers only
 * (allowPrivateTargets): getaddrinfo runs on libuv's thread pool, shared with argon2 and file I/O, and
 * cannot be cancelled, so a slow name would hold a thread past the deadline.
 */
export const systemResolver: ResolveHost = (hostname) => lookup(hostname, { all: true });

/** How long c-ares waits for one DNS answer before it asks again (doubling), and how often it asks. */
const DNS_QUERY_TIMEOUT_MS = 2000;
const DNS_TRIES = 2;

/**
 * DNS through c-ares (A and AAAA queries on the event loop, not the thread pool), cancelled at the
 * deadline. No /etc/hosts: a public receiver has a public name. `servers` replaces the system's
 * name servers (tests).
 */
export function dnsResolver(servers?: string[]): ResolveHost {
  return async (hostname, signal) => {
    const resolver = new Resolver({ timeout: DNS_QUERY_TIMEOUT_MS, tries: DNS_TRIES });
    if (servers) resolver.setServers(servers);
    const cancel = () => resolver.cancel();
    if (signal.aborted) cancel();
    else signal.addEventListener('abort', cancel, { once: true });
    try {
      const [v4, v6] = await Promise.allSettled([resolver.resolve4(hostname), resolver.resolve6(hostname)]);
      const addresses: LookupAddress[] = [
        ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 })) : []),
        ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 })) : []),
      ];
      if (addresses.length === 0 && v4.status === 'rejected') throw v4.reason;
      return addresses;
    } finally {
      signal.removeEventListener('abort', cancel);
    }
  };
}

/** The resolver a policy gets unless a test gives one: c-ares for public targets, getaddrinfo on premise. */
export function defaultResolver(policy: TargetPolicy): ResolveHost {
  return policy.allowPrivateTargets ? systemResolver : dnsResolver();
}

/** What tests replace: the resolver and the deadline. */
export interface OutboundOptions {
  /** Default: defaultResolver(policy). */
  resolve?: ResolveHost;
  /** The deadline of the whole exchange, resolution included. Default 10 s. */
  timeoutMs?: number;
}

/** The contract's deadline for one attempt. */
export const DEFAULT_TIMEOUT_MS = 10_000;

/** The addresses to connect to, every one of them checked, or why there are none. */
export type ResolvedTarget = { addresses: LookupAddress[] } | { problem: string };

/**
 * Why a name cannot be a target, in the same words whatever the reason: an answer that is not public,
 * no such name, a resolver that failed or did not answer. The people who register endpoints are not
 * told which addresses a name has inside the operator's network, nor whether it exists there.
 */
export function unresolvedProblem(host: string, policy: TargetPolicy): string {
  return policy.allowPrivateTargets
    ? `${host} does not resolve to an address webhooks may use`
    : `${host} does not resolve to a public address`;
}

/**
 * Resolves a host once and checks every address it has: one address that is not public refuses the
 * target, however many public ones come with it (a resolver may answer differently the next time).
 * A literal address is not resolved, and a refusal names it (the user typed it); a refused name is
 * refused in one sentence (unresolvedProblem). With allowPrivateTargets only cloud metadata addresses
 * are refused.
 */
export async function resolveTarget(
  host: string,
  policy: TargetPolicy,
  resolve: ResolveHost,
  signal: AbortSignal,
): Promise<ResolvedTarget> {
  const family = isIP(host);
  let addresses: LookupAddress[];
  if (family) {
    addresses = [{ address: host, family }];
  } else {
    try {
      addresses = await resolve(host, signal);
    } catch {
      return { problem: unresolvedProblem(host, policy) };
    }
    if (addresses.length === 0) return { problem: unresolvedProblem(host, policy) };
  }
  for (const { address } of addresses) {
    const problem = policy.allowPrivateTargets ? metadataProblem(address) : addressProblem(address);
    if (problem) return { problem: family ? problem : unresolvedProblem(host, policy) };
  }
  return { addresses };
}

/**
 * urlProblem, then the name resolved: refused when any of its addresses is not public (unless allowed),
 * or when it does not resolve in time. With allowPrivateTargets only urlProblem applies (no resolution).
 * The answer is advice for a form: every delivery resolves and checks again.
 */
export async function targetProblem(url: string, policy: TargetPolicy, options: OutboundOptions = {}): Promise<string | null> {
  const problem = urlProblem(url, policy);
  if (problem || policy.allowPrivateTargets) return problem;
  const host = urlHost(new URL(url));
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const timedOut = new Promise<ResolvedTarget>((resolve) =>
    deadline.signal.addEventListener('abort', () => resolve({ problem: unresolvedProblem(host, policy) }), { once: true }),
  );
  try {
    const resolving = resolveTarget(host, policy, options.resolve ?? defaultResolver(policy), deadline.signal);
    const target = await Promise.race([resolving, timedOut]);
    return 'problem' in target ? target.problem : null;
  } finally {
    clearTimeout(timer);
    deadline.abort(); // a resolver still asking stops now
  }
}

/** Whether a URL's check resolves a name (a form throttles those: each is DNS traffic the user causes). */
export function resolvesName(url: string, policy: TargetPolicy): boolean {
  if (policy.allowPrivateTargets) return false;
  try {
    return isIP(urlHost(new URL(url))) === 0;
  } catch {
    return false;
  }
}

/** A duration for a message: "10 s", "1.5 s", "300 ms". */
export function seconds(ms: number): string {
  return ms >= 1000 ? `${ms / 1000} s` : `${ms} ms`;
}
