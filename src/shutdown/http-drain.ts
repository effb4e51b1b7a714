import { Injectable } from '@nestjs/common';
import type { FastifyInstance } from 'fastify';
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import { Server as NetServer, Socket } from 'node:net';

export interface DrainReport {
  connectionsAtSignal: number;
  requestsInProgressAtSignal: number;
  /** Responses sent from the signal on. */
  requestsAnswered: number;
  /** Requests still in progress at the deadline, whose connections were closed under them. */
  requestsCut: number;
  /** Connections still open at the deadline (with a request in progress or one half received). */
  connectionsCut: number;
  drainMs: number;
}

/**
 * The HTTP half of shutdown (docs/operations.md, "Shutdown and drain"). `attach` wires it into the
 * server at start-up; `drain`, on SIGTERM/SIGINT and before `app.close()`:
 * - closes the listener, so new connections are refused (the client knows nothing was applied);
 * - keeps serving open connections: the response to the latest request received on a connection says
 *   `Connection: close`, and a request arriving after that one is never processed, as HTTP/1.1 lets a
 *   client assume of requests behind a `close`;
 * - after the idle grace, closes connections with nothing in progress, each time after one pass of
 *   the event loop's I/O, so a request the kernel already holds is read and answered, not reset;
 * - resolves once no connection is left, or at the deadline after closing what remains.
 *
 * Why not `app.close()` straight away: Nest stops Apollo and the signing thread in onModuleDestroy,
 * before it closes the HTTP server, so requests read meanwhile fail; Fastify answers 503 to requests
 * read once its close begins (`return503OnClosing`); and Node's `http.Server#close` destroys idle
 * keep-alive connections at once, resetting any whose next request has arrived but is unread.
 */
@Injectable()
export class HttpDrain {
  private server: Server | undefined;
  private startedAt: number | undefined;
  private answered = 0;
  private readonly connections = new Set<Socket>();
  private readonly inProgress = new Set<ServerResponse>();
  private readonly latest = new WeakMap<Socket, IncomingMessage>();
  /** Connections whose last response says `Connection: close`. */
  private readonly closing = new WeakSet<Socket>();

  get draining(): boolean {
    return this.startedAt !== undefined;
  }

  attach(fastify: FastifyInstance): void {
    const server = fastify.server;
    const handlers = server.listeners('request') as RequestListener[];
    if (handlers.length === 0) throw new Error('HttpDrain.attach: the server has no request handler yet');
    this.server = server;
    server.on('connection', (socket: Socket) => {
      this.connections.add(socket);
      socket.once('close', () => this.connections.delete(socket));
    });
    // In place of Fastify's handler, so a request behind a `Connection: close` never reaches it.
    server.removeAllListeners('request');
    // Listeners made once, not per request: a response emits each event once.
    const onFinish = () => this.draining && this.answered++;
    const inProgress = this.inProgress;
    function onClose(this: ServerResponse) {
      inProgress.delete(this);
    }
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      if (this.closing.has(req.socket)) return;
      this.latest.set(req.socket, req);
      this.inProgress.add(res);
      res.on('finish', onFinish);
      res.on('close', onClose);
      for (const handler of handlers) handler.call(server, req, res);
    });
    fastify.addHook('onSend', (request, reply, payload, done) => {
      if (this.draining && this.latest.get(request.raw.socket) === request.raw) {
        this.closing.add(request.raw.socket);
        void reply.header('connection', 'close');
      }
      done(null, payload);
    });
  }

  /** Times from the call: `idleGraceMs` before idle connections close, `deadlineMs` before the rest are cut. */
  async drain(idleGraceMs: number, deadlineMs: number): Promise<DrainReport> {
    const server = this.server;
    if (!server) throw new Error('HttpDrain.drain: not attached to a server');
    const startedAt = (this.startedAt = performance.now());
    const atSignal = { connectionsAtSignal: this.connections.size, requestsInProgressAtSignal: this.inProgress.size };

    // net.Server's close, not http.Server's (which also destroys idle connections at once): stops
    // accepting and calls back once the last connection has closed.
    const noneLeft = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
    const closeIdle = () => setImmediate(() => server.closeIdleConnections());
    const timers: NodeJS.Timeout[] = [];
    let cut = false;
    const deadline = new Promise<void>((resolve) =>
      timers.push(
        setTimeout(() => ((cut = true), resolve()), deadlineMs),
        setTimeout(() => (closeIdle(), timers.push(setInterval(closeIdle, 50))), idleGraceMs),
      ),
    );
    await Promise.race([noneLeft, deadline]);
    for (const timer of timers) clearTimeout(timer);

    const requestsCut = cut ? this.inProgress.size : 0;
    const connectionsCut = cut ? this.connections.size : 0;
    if (cut) {
      for (const socket of this.connections) socket.destroy();
      await noneLeft;
    }
    const drainMs = Math.round(performance.now() - startedAt);
    return { ...atSignal, requestsAnswered: this.answered, requestsCut, connectionsCut, drainMs };
  }
}
