import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import type { ParsedMail } from 'mailparser';
import { idOfType } from '../../src/graphql/global-id.js';
import { generateSecret, hashSecret, SecretPrefix } from '../../src/auth/secret-token.js';
import { createEvent, createOrganizer, registerFor, registrationOf } from './events.js';
import type { TestSmtpServer } from './smtp-server.js';
import type { TestApp } from './test-app.js';

// Registrations and their confirmation mails against built server processes (the fleet, fault and
// shutdown tiers): users straight into the database, the rest over GraphQL as a client does it.

type Query = <T = Record<string, unknown>>(sql: string, values?: unknown[]) => Promise<T[]>;

export interface Person {
  id: string;
  email: string;
  token: string;
}

/**
 * Users with a personal access token each, inserted with SQL (the CLI hashes a password per user with
 * argon2: slow for dozens). The tokens are made and stored as Agora does (prefix, checksum, SHA-256).
 */
export async function insertPeople(query: Query, count: number): Promise<Person[]> {
  const tag = randomBytes(4).toString('hex');
  const usernames = Array.from({ length: count }, (_, i) => `mail-${tag}-${i + 1}`);
  const users = await query<{ id: string; username: string }>(
    `INSERT INTO users (username, email, name, password_hash, email_verified_at)
     SELECT u, u || '@example.com', 'Mail user ' || u, 'not-a-password-hash', now() FROM unnest($1::text[]) AS u RETURNING id, username`,
    [usernames],
  );
  const idOf = new Map(users.map((u) => [u.username, u.id]));
  const people = usernames.map((username) => ({
    id: idOf.get(username)!,
    email: `${username}@example.com`,
    token: generateSecret(SecretPrefix.personalAccessToken),
  }));
  await query(
    `INSERT INTO personal_access_tokens (user_id, name, token_hash, scopes)
     SELECT t.user_id, 'mail', t.hash, ARRAY['api'] FROM unnest($1::uuid[], $2::text[]) AS t(user_id, hash)`,
    [people.map((p) => p.id), people.map((p) => hashSecret(p.token))],
  );
  return people;
}

/** What the GraphQL helpers of events.ts need of a server: its address, and the time (the machine's). */
export function serverAt(url: string): TestApp {
  return { url, clock: { now: () => new Date() } } as unknown as TestApp;
}

/** An organizer of `owner`'s with `count` published events (capacity 100, free tickets). */
export async function organizerWithEvents(url: string, owner: Person, count: number): Promise<{ id: string; ticketTypeId: string }[]> {
  const api = serverAt(url);
  const organizer = await createOrganizer(api, owner.token);
  const events = [];
  for (let i = 0; i < count; i++) events.push(await createEvent(api, owner.token, organizer.id, { format: 'IN_PERSON' }));
  return events;
}

/** Registers `person` (one attendee) on the server at `url`; the registration's id (the database's, not the global id). */
export async function register(url: string, person: Person, event: { id: string; ticketTypeId: string }): Promise<string> {
  const { id } = registrationOf(await registerFor(serverAt(url), person.token, event)) as { id: string };
  const registrationId = idOfType(id, 'Registration');
  if (!registrationId) throw new Error(`not a registration's id: ${id}`);
  return registrationId;
}

/** The confirmations ("You're registered: …") that arrived for `email`. */
export function confirmationsTo(smtp: TestSmtpServer, email: string): ParsedMail[] {
  return smtp.arrivals.filter((a) => a.to.includes(email) && /registered:/.test(a.mail.subject ?? '')).map((a) => a.mail);
}

/** Resolves once `probe` is true; throws after `limitMs` with what `explain` says. */
export async function waitUntil(probe: () => boolean | Promise<boolean>, limitMs: number, explain: () => string): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`still not the case after ${limitMs} ms: ${explain()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The registration-notices jobs about these registrations, by state (pg-boss's table). */
export async function noticeJobStates(query: Query, registrationIds: string[]): Promise<Record<string, number>> {
  const rows = await query<{ state: string; count: number }>(
    `SELECT state::text AS state, count(*)::int AS count FROM pgboss.job
      WHERE name = 'registration-notices' AND data->>'message' = 'registration.confirmed' AND data->>'registrationId' = ANY($1)
      GROUP BY state`,
    [registrationIds],
  );
  return Object.fromEntries(rows.map((row) => [row.state, row.count]));
}

/** The local ports of the TCP sockets process `pid` holds (Linux: /proc), to tell which process a connection came from. */
export function localTcpPorts(pid: number): Set<number> {
  const inodes = new Set<string>();
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return new Set(); // gone
  }
  for (const fd of fds) {
    try {
      const link = readlinkSync(`/proc/${pid}/fd/${fd}`);
      const inode = /^socket:\[(\d+)\]$/.exec(link)?.[1];
      if (inode) inodes.add(inode);
    } catch {
      // closed meanwhile
    }
  }
  const ports = new Set<number>();
  for (const table of ['tcp', 'tcp6']) {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/net/${table}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const columns = line.trim().split(/\s+/);
      if (columns.length > 9 && inodes.has(columns[9]!)) ports.add(parseInt(columns[1]!.split(':')[1]!, 16));
    }
  }
  return ports;
}
