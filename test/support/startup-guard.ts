import { createServer, Socket } from 'node:net';

/**
 * Start-up parameters PgBouncer accepts in session mode without `ignore_startup_parameters`: the ones
 * it tracks itself (its docs, "ignore_startup_parameters" and "track_extra_parameters").
 */
const PGBOUNCER_PARAMETERS = new Set([
  'user',
  'database',
  'application_name',
  'client_encoding',
  'datestyle',
  'timezone',
  'standard_conforming_strings',
  'intervalstyle',
]);

const PROTOCOL_3 = 196_608;

/** What a proxy in front of PostgreSQL heard and refused. */
export interface StartupGuard {
  url: string;
  /** Every start-up parameter name a client sent, in order. */
  parameters: string[];
  /** The parameters refused (`unsupported startup parameter: …`). */
  refused: string[];
  close(): Promise<void>;
}

/**
 * A TCP proxy in front of the database `url` points at that reads each connection's StartupMessage as
 * PgBouncer does: a parameter it does not track is answered with PgBouncer's FATAL error (SQLSTATE
 * 08P01) and the connection closed; otherwise the connection goes through unchanged.
 */
export async function startStartupGuard(url: string): Promise<StartupGuard> {
  const direct = new URL(url);
  const sockets = new Set<Socket>();
  const guard: Omit<StartupGuard, 'url' | 'close'> = { parameters: [], refused: [] };
  const server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client)).on('error', () => client.destroy());
    let buffered = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      if (buffered.length < 8) return;
      const length = buffered.readInt32BE(0);
      if (buffered.length < length) return;
      client.off('data', onData);
      client.pause();
      const unsupported = buffered.readInt32BE(4) === PROTOCOL_3 ? unsupportedParameters(buffered.subarray(8, length), guard) : [];
      if (unsupported.length > 0) {
        guard.refused.push(...unsupported);
        client.end(fatal('08P01', `unsupported startup parameter: ${unsupported[0]}`));
        return;
      }
      const upstream = new Socket();
      sockets.add(upstream);
      upstream.on('close', () => (sockets.delete(upstream), client.destroy())).on('error', () => upstream.destroy());
      client.on('close', () => upstream.destroy());
      upstream.connect(Number(direct.port || 5432), direct.hostname, () => {
        upstream.write(buffered);
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
      });
    };
    client.on('data', onData);
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', () => resolve()));
  const through = new URL(direct);
  through.hostname = '127.0.0.1';
  through.port = String((server.address() as { port: number }).port);
  return {
    ...guard,
    url: through.toString(),
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function unsupportedParameters(body: Buffer, guard: { parameters: string[] }): string[] {
  const fields = body.toString('utf8').split('\0');
  const unsupported: string[] = [];
  for (let i = 0; i + 1 < fields.length && fields[i] !== ''; i += 2) {
    const name = fields[i]!;
    guard.parameters.push(name);
    if (!PGBOUNCER_PARAMETERS.has(name.toLowerCase())) unsupported.push(name);
  }
  return unsupported;
}

/** An ErrorResponse with severity FATAL. */
function fatal(code: string, message: string): Buffer {
  const fields = Buffer.from(`SFATAL\0VFATAL\0C${code}\0M${message}\0\0`, 'utf8');
  const header = Buffer.alloc(5);
  header.write('E', 0);
  header.writeInt32BE(fields.length + 4, 1);
  return Buffer.concat([header, fields]);
}
