// The event listing's peer and its mixed load, for eventsBenchmark in bench/run.ts.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync, type ChildProcess } from 'node:child_process';
import { freePort, processCpuMicros, startProcess, stopProcess } from './harness.js';

/** What PostGraphile (bench/postgraphile.ts) is asked: the page Agora's EVENT_PAGE asks for, field for field. */
export const POSTGRAPHILE_PAGE = `query Upcoming($after: Datetime!) {
  upcomingEvents(startsAfter: $after, first: 50) {
    nodes { id title startsAt endsAt timeZone format venueName venueCity venueCountry spotsLeft
      organizerByOrganizerId { name slug } listedTicketTypes { nodes { name priceAmount priceCurrency remaining } } }
    pageInfo { hasNextPage endCursor }
  }
}`;

/** PostGraphile 5 (bench/postgraphile.ts) in its own process on `databaseUrl`, for the time `fn` runs. */
export async function withPostgraphile<T>(root: string, databaseUrl: string, fn: (url: string, pid: number) => Promise<T>): Promise<T> {
  installPeers(root);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/graphql`;
  const server: ChildProcess = await startProcess(
    'node',
    [join(root, 'dist/bench/postgraphile.js'), String(port), databaseUrl],
    { NODE_ENV: 'production' },
    url,
  );
  try {
    return await fn(url, server.pid!);
  } finally {
    await stopProcess(server);
  }
}

/**
 * PostGraphile lives in bench/peers, a package of its own with its own lockfile: it asks for Node 22, and
 * the project's `npm ci` stays free of engine warnings on Node 20. Installed there on first use (npm warns
 * about the engine on Node 20; the peer runs there with the polyfill in bench/postgraphile.ts).
 */
function installPeers(root: string): void {
  const peers = join(root, 'bench/peers');
  if (existsSync(join(peers, 'node_modules/postgraphile/package.json'))) return;
  console.error('installing the benchmark peers in bench/peers (npm ci)');
  execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: peers, stdio: 'inherit' });
}

/** The events and ticket types (global ids) of a page, in its order: what the mixed load registers for. */
export async function listedTicketTypes(agoraGraphql: string, after: string): Promise<{ eventId: string; ticketTypeId: string }[]> {
  const response = await fetch(agoraGraphql, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      query: 'query($after: DateTime!) { events(first: 50, filter: { startsAfter: $after }) { nodes { id ticketTypes { id } } } }',
      variables: { after },
    }),
  });
  const body = (await response.json()) as { data: { events: { nodes: { id: string; ticketTypes: { id: string }[] }[] } } };
  return body.data.events.nodes.map((e) => ({ eventId: e.id, ticketTypeId: e.ticketTypes[0]!.id }));
}

const REGISTER = `mutation Register($input: RegisterForEventInput!) {
  registerForEvent(input: $input) { registration { id status } userErrors { code message } }
}`;

/**
 * autocannon's `setupRequest` for registrations to the listed events: request n is token n / events
 * for event n % events, so no pair repeats (up to tokens × events requests) and the events take turns,
 * each registration changing a seat count on the page being listed.
 */
export function registrations(
  tokens: string[],
  events: { eventId: string; ticketTypeId: string }[],
): (request: { body?: string }) => { body?: string; headers: Record<string, string> } {
  let n = 0;
  return (request) => {
    const i = n++;
    const event = events[i % events.length]!;
    const token = tokens[Math.floor(i / events.length) % tokens.length]!;
    return {
      ...request,
      headers: { 'content-type': 'application/json', 'private-token': token },
      body: JSON.stringify({
        query: REGISTER,
        variables: { input: { ...event, attendees: [{ name: `Mixed ${i}`, email: `mixed-${i}@example.com` }] } },
      }),
    };
  };
}

/** CPU time of a process while `work` runs, µs. */
export async function cpuDuring<T>(pid: number, work: () => Promise<T>): Promise<{ result: T; cpuUs: number }> {
  const before = processCpuMicros(pid) ?? 0;
  const result = await work();
  return { result, cpuUs: (processCpuMicros(pid) ?? 0) - before };
}
