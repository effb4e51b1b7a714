import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One request a receiver got, and what it answered. */
export interface ReceivedWebhook {
  /** `webhook-id`, `webhook-timestamp`, `webhook-signature`, content-type… (lower-case names). */
  headers: Record<string, string>;
  body: string;
  /** The status it answered. */
  status: number;
  path: string;
  /** Date.now() when it arrived. */
  at: number;
  /** The sender's port (to tell which process sent it: localTcpPorts). */
  remotePort: number;
}

/**
 * A webhook receiver in the test process, on a real port of 127.0.0.1: it records every request and
 * answers `answer` (200 unless told otherwise); `down()` closes the port (connections refused) until `up()`.
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  private status: number | ((request: ReceivedWebhook) => number) = 200;
  private server: Server;
  private stalls = 0;
  /** Requests received whole and never answered (stallNext). */
  held = 0;

  private constructor(readonly port: number) {
    this.server = this.listener();
  }

  static async start(): Promise<WebhookReceiver> {
    const probe = createServer();
    probe.listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const { port } = probe.address() as AddressInfo;
    await new Promise((resolve) => probe.close(resolve));
    const receiver = new WebhookReceiver(port);
    await receiver.up();
    return receiver;
  }

  url(path = '/hooks'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** What it answers from now on: a status, or one per request. */
  answer(status: number | ((request: ReceivedWebhook) => number)): void {
    this.status = status;
  }

  /** The next `count` requests are read whole and never answered: an attempt in flight. Not recorded in `received`. */
  stallNext(count = 1): void {
    this.stalls += count;
  }

  /** The requests to one path (one endpoint). */
  at(path: string): ReceivedWebhook[] {
    return this.received.filter((r) => r.path === path);
  }

  /** Stops listening: further attempts find the port closed (ECONNREFUSED). */
  async down(): Promise<void> {
    if (!this.server.listening) return;
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  async up(): Promise<void> {
    if (this.server.listening) return;
    this.server = this.listener();
    this.server.listen(this.port, '127.0.0.1');
    await once(this.server, 'listening');
  }

  close(): Promise<void> {
    return this.down();
  }

  private listener(): Server {
    return createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers[name] = value;
        if (this.stalls > 0) {
          this.stalls--;
          this.held++;
          return;
        }
        const request: ReceivedWebhook = {
          headers,
          body: Buffer.concat(chunks).toString('utf8'),
          status: 0,
          path: req.url ?? '',
          at: Date.now(),
          remotePort: req.socket.remotePort ?? 0,
        };
        request.status = typeof this.status === 'function' ? this.status(request) : this.status;
        this.received.push(request);
        res.writeHead(request.status, { 'content-type': 'text/plain' }).end(request.status < 300 ? 'ok' : 'not now');
      });
    });
  }
}

/** The payload, when the `standardwebhooks` library verifies the request with this secret; throws otherwise. */
export function verify(secret: string, request: ReceivedWebhook): unknown {
  return new Webhook(secret).verify(request.body, request.headers);
}

/** Each webhook-id once: the requests a receiver that deduplicates would act on (its 2xx answers, first of each id). */
export function deduplicated(requests: ReceivedWebhook[]): ReceivedWebhook[] {
  const seen = new Set<string>();
  return requests.filter((r) => {
    if (r.status >= 300 || seen.has(r.headers['webhook-id']!)) return false;
    seen.add(r.headers['webhook-id']!);
    return true;
  });
}
