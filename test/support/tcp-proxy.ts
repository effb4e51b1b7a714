import { createServer, Server, Socket } from 'node:net';

/**
 * A TCP proxy in front of a database server, for fault tests: `cut()` resets every open connection and
 * refuses new ones (as a database that went down), `restore()` lets connections through again;
 * `delayMs` holds back what the server sends (a slow network), `freeze()` stops delivering it without
 * closing anything (a partition) until `thaw()`. `blackhole()` drops packets instead: what either side
 * sends on an open connection is discarded, for good, and a new connection is accepted but never
 * reaches the server, so nothing is refused or closed and nothing ever answers; after `heal()` new
 * connections work again while those open during the blackhole stay silent (the state a stateful
 * firewall or NAT that lost its flows leaves behind: only closing them helps).
 */
export interface TcpProxy {
  port: number;
  delayMs: number;
  freeze(): void;
  thaw(): void;
  blackhole(): void;
  heal(): void;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const silenced = new Set<{ dead: boolean }>();
  let blackholed = false;
  const listen = (server: Server, port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
  const newServer = () =>
    createServer((client) => {
      const upstream = new Socket();
      sockets.add(client).add(upstream);
      const link = { dead: blackholed };
      silenced.add(link);
      const drop = () => {
        client.destroy();
        upstream.destroy();
        sockets.delete(client);
        sockets.delete(upstream);
        silenced.delete(link);
      };
      client.on('error', drop).on('close', drop);
      upstream.on('error', drop).on('close', drop);
      if (link.dead) return; // accepted, and never connected: a silent server
      upstream.connect(targetPort, targetHost, () => {
        client.on('data', (chunk: Buffer) => void (link.dead || upstream.write(chunk)));
        client.on('end', () => void (link.dead || upstream.end()));
        upstream.on('data', (chunk: Buffer) => deliver(client, chunk, link));
      });
    });

  // Server-to-client bytes go through one ordered queue per connection, released after the delay.
  let frozen: (() => void)[] | undefined;
  const deliver = (client: Socket, chunk: Buffer, link: { dead: boolean }) => {
    const send = () => {
      if (!client.destroyed && !link.dead) client.write(chunk);
    };
    const release = () => (frozen ? frozen.push(send) : send());
    if (proxy.delayMs > 0) setTimeout(release, proxy.delayMs);
    else release();
  };

  let server: Server | undefined = newServer();
  await listen(server, 0);
  const { port } = server.address() as { port: number };
  const stop = async () => {
    const closing = server;
    server = undefined;
    if (closing) await new Promise<void>((resolve) => closing.close(() => resolve()));
  };

  const proxy: TcpProxy = {
    port,
    delayMs: 0,
    freeze() {
      frozen ??= [];
    },
    thaw() {
      const held = frozen ?? [];
      frozen = undefined;
      for (const send of held) send();
    },
    blackhole() {
      blackholed = true;
      for (const link of silenced) link.dead = true;
    },
    heal() {
      blackholed = false;
    },
    async cut() {
      const closed = stop();
      for (const socket of sockets) socket.resetAndDestroy();
      sockets.clear();
      await closed;
    },
    async restore() {
      if (server) return;
      server = newServer();
      await listen(server, port);
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await stop();
    },
  };
  return proxy;
}

/** A proxy in front of the database `url` points at, and the same URL through it. */
export async function proxyDatabase(url: string): Promise<{ proxy: TcpProxy; url: string }> {
  const direct = new URL(url);
  const proxy = await startTcpProxy(direct.hostname, Number(direct.port || 5432));
  const through = new URL(direct);
  through.hostname = '127.0.0.1';
  through.port = String(proxy.port);
  return { proxy, url: through.toString() };
}
