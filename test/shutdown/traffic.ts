import { RawConnection, RawRequest, RawResponse } from '../support/raw-http.js';

/**
 * Clients of a server about to be stopped, and the record of every request they sent: when the kernel
 * took it (before or after the signal), and what came back.
 */

export type Kind = 'write' | 'read' | 'health' | 'readiness';

export interface Exchange {
  kind: Kind;
  /** The organizer a write creates. */
  slug?: string;
  /** When the request's bytes were handed to the kernel (performance.now()). */
  flushedAt?: number;
  response?: RawResponse;
  /** Why no response came. */
  error?: string;
  /** The connection it was sent on. */
  connection: RawConnection;
}

interface Outgoing {
  kind: Kind;
  slug?: string;
  request: RawRequest;
}

const CREATE_ORGANIZER =
  'mutation($input: CreateOrganizerInput!) { createOrganizer(input: $input) { organizer { slug } userErrors { message } } }';

export class Traffic {
  readonly exchanges: Exchange[] = [];
  signalAt = Infinity;
  /** New connections tried after the signal: refused (the listener is closed) or accepted. */
  readonly afterSignal = { refused: 0, accepted: 0 };
  private writes = 0;

  constructor(
    private readonly port: number,
    private readonly token: string,
    private readonly prefix: string,
  ) {}

  write(): Outgoing {
    const slug = `${this.prefix}-${++this.writes}`;
    return {
      kind: 'write',
      slug,
      request: this.graphql(CREATE_ORGANIZER, { input: { slug, name: `Drain ${slug}` } }),
    };
  }

  read(): Outgoing {
    return { kind: 'read', request: this.graphql('{ viewer { username } }') };
  }

  health(): Outgoing {
    return { kind: 'health', request: { method: 'GET', path: '/healthz' } };
  }

  readiness(): Outgoing {
    return { kind: 'readiness', request: { method: 'GET', path: '/readyz' } };
  }

  open(): Promise<RawConnection> {
    return RawConnection.open(this.port);
  }

  /** Sends the requests on `connection` in one write and records each; resolves once all have settled. */
  async send(connection: RawConnection, outgoing: Outgoing[]): Promise<Exchange[]> {
    const { flushed, responses } = connection.send(outgoing.map((o) => o.request));
    const exchanges = outgoing.map((o): Exchange => ({ kind: o.kind, slug: o.slug, connection }));
    this.exchanges.push(...exchanges);
    flushed.then(
      (at) => exchanges.forEach((e) => (e.flushedAt = at)),
      () => undefined,
    );
    await Promise.all(
      responses.map((r, i) =>
        r.then(
          (response) => (exchanges[i]!.response = response),
          (err: Error) => (exchanges[i]!.error = err.message),
        ),
      ),
    );
    return exchanges;
  }

  /**
   * A client that always has one request in flight on a keep-alive connection, the way an HTTP client
   * pool behaves: when a response says `Connection: close` it opens a new connection, and it stops
   * when a connection is refused or a request fails.
   */
  async busyClient(mix: (n: number) => Outgoing): Promise<void> {
    let connection = await this.open();
    for (let n = 0; ; n++) {
      const [exchange] = await this.send(connection, [mix(n)]);
      if (!exchange!.response) return;
      if (exchange!.response.headers.connection?.toLowerCase() === 'close') {
        await connection.closed;
        const afterSignal = performance.now() > this.signalAt;
        try {
          connection = await this.open();
          if (afterSignal) this.afterSignal.accepted++;
        } catch {
          if (afterSignal) this.afterSignal.refused++;
          return;
        }
      }
    }
  }

  signal(send: () => void): void {
    this.signalAt = performance.now();
    send();
  }

  sentBeforeSignal(): Exchange[] {
    return this.exchanges.filter((e) => e.flushedAt !== undefined && e.flushedAt < this.signalAt);
  }

  /** Requests the kernel had before the signal whose response had not arrived by then. */
  inFlightAtSignal(): Exchange[] {
    return this.sentBeforeSignal().filter((e) => !e.response || e.response.receivedAt > this.signalAt);
  }

  /** What is wrong with an exchange, or undefined: every request gets a complete, successful answer. */
  problem(e: Exchange): string | undefined {
    if (!e.response) return `${e.kind}: no response (${e.error ?? 'pending'})`;
    const { status, body } = e.response;
    const expected = e.kind === 'readiness' && e.response.receivedAt > this.signalAt ? 503 : 200;
    if (status !== expected) return `${e.kind}: ${status} ${body.slice(0, 200)}`;
    if (e.kind === 'read' || e.kind === 'write') {
      const json = JSON.parse(body) as { data?: any; errors?: unknown };
      if (json.errors) return `${e.kind}: ${body.slice(0, 200)}`;
      if (e.kind === 'write' && json.data?.createOrganizer?.organizer?.slug !== e.slug) return `write ${e.slug}: ${body.slice(0, 200)}`;
    }
    return undefined;
  }

  /** Slugs of the organizers whose creation the server acknowledged. */
  acknowledgedWrites(): string[] {
    return this.exchanges.filter((e) => e.kind === 'write' && e.response && !this.problem(e)).map((e) => e.slug!);
  }

  private graphql(query: string, variables?: Record<string, unknown>): RawRequest {
    return { method: 'POST', path: '/graphql', headers: { 'private-token': this.token }, json: { query, variables } };
  }
}

/** Organizers (of `slugs`) that the server at `baseUrl` does not have. */
export async function missingOrganizers(baseUrl: string, token: string, slugs: string[]): Promise<string[]> {
  const missing: string[] = [];
  for (let i = 0; i < slugs.length; i += 100) {
    const batch = slugs.slice(i, i + 100);
    const query = `{ ${batch.map((slug, j) => `o${j}: organizer(slug: ${JSON.stringify(slug)}) { slug }`).join(' ')} }`;
    const res = await fetch(`${baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'private-token': token },
      body: JSON.stringify({ query }),
    });
    const json = (await res.json()) as { data?: Record<string, { slug: string } | null>; errors?: unknown };
    if (!json.data) throw new Error(`cannot read organizers back: ${JSON.stringify(json)}`);
    batch.forEach((slug, j) => {
      if (json.data![`o${j}`]?.slug !== slug) missing.push(slug);
    });
  }
  return missing;
}
