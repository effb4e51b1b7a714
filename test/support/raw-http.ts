import { connect, Socket } from 'node:net';

/**
 * An HTTP/1.1 keep-alive connection on a raw socket, for tests that must know exactly what was sent
 * when: `send` writes its requests in one write (pipelined when there are several) and reports when
 * the kernel has them, and the connection records how the server closed it (a clean FIN or a reset).
 * fetch and http.Agent hide both.
 */

export interface RawRequest {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  /** A JSON body; sent with its Content-Length. */
  json?: unknown;
}

export interface RawResponse {
  status: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  body: string;
  /** When the whole response had arrived (performance.now()). */
  receivedAt: number;
}

interface Pending {
  resolve: (response: RawResponse) => void;
  reject: (error: Error) => void;
}

export class RawConnection {
  /** How the server closed the connection: `end` (FIN) or an error code such as ECONNRESET; undefined while open. */
  closedBy: string | undefined;
  readonly closed: Promise<void>;
  private buffer = Buffer.alloc(0);
  private readonly pending: Pending[] = [];

  private constructor(
    private readonly socket: Socket,
    private readonly host: string,
  ) {
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.parse();
    });
    socket.on('end', () => (this.closedBy ??= 'end'));
    socket.on('error', (err: NodeJS.ErrnoException) => (this.closedBy ??= err.code ?? err.message));
    this.closed = new Promise((done) =>
      socket.on('close', () => {
        this.closedBy ??= 'close';
        for (const p of this.pending.splice(0)) p.reject(new Error(`connection closed before the response (${this.closedBy})`));
        done();
      }),
    );
  }

  /** Opens a connection; rejects with the socket error (ECONNREFUSED once the server stopped listening). */
  static open(port: number, host = '127.0.0.1'): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect({ port, host });
      socket.setNoDelay(true);
      socket.once('error', reject);
      socket.once('connect', () => {
        socket.off('error', reject);
        resolve(new RawConnection(socket, `${host}:${port}`));
      });
    });
  }

  get open(): boolean {
    return this.closedBy === undefined;
  }

  /**
   * Writes the requests in one write. `flushed` resolves with the time (performance.now()) the kernel
   * had the bytes: at once when the socket took them synchronously, as it does on an idle connection.
   * `responses` settle in order, or reject if the connection closes first.
   */
  send(requests: RawRequest[]): { flushed: Promise<number>; responses: Promise<RawResponse>[] } {
    if (!this.open) {
      const closed = Promise.reject(new Error(`connection already closed (${this.closedBy})`));
      closed.catch(() => undefined);
      return { flushed: closed, responses: requests.map(() => closed) };
    }
    const responses = requests.map(() => new Promise<RawResponse>((resolve, reject) => this.pending.push({ resolve, reject })));
    for (const r of responses) r.catch(() => undefined);
    const bytes = Buffer.concat(requests.map((r) => this.serialize(r)));
    const callback = new Promise<number>((resolve, reject) =>
      this.socket.write(bytes, (err) => (err ? reject(err) : resolve(performance.now()))),
    );
    callback.catch(() => undefined);
    const flushed = this.socket.writableLength === 0 ? Promise.resolve(performance.now()) : callback;
    return { flushed, responses };
  }

  /** Writes bytes as they are: a request the server has begun to receive but cannot finish. */
  writeRaw(text: string): void {
    this.socket.write(text);
  }

  close(): void {
    this.socket.destroy();
  }

  private serialize(r: RawRequest): Buffer {
    const body = r.json === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(r.json));
    const headers: Record<string, string> = { host: this.host, ...r.headers };
    if (r.json !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(body.length);
    }
    const head = `${r.method} ${r.path} HTTP/1.1\r\n${Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('')}\r\n`;
    return Buffer.concat([Buffer.from(head, 'latin1'), body]);
  }

  /** Takes every complete response off the buffer (Content-Length or chunked bodies). */
  private parse(): void {
    for (;;) {
      const end = this.buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      const [statusLine, ...lines] = this.buffer.subarray(0, end).toString('latin1').split('\r\n');
      const status = Number(statusLine!.split(' ')[1]);
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      let rest = this.buffer.subarray(end + 4);
      let body: Buffer;
      if (headers['transfer-encoding'] === 'chunked') {
        const parts: Buffer[] = [];
        for (;;) {
          const lineEnd = rest.indexOf('\r\n');
          if (lineEnd < 0) return;
          const size = parseInt(rest.subarray(0, lineEnd).toString('latin1'), 16);
          if (rest.length < lineEnd + 2 + size + 2) return;
          parts.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
          rest = rest.subarray(lineEnd + 2 + size + 2);
          if (size === 0) break;
        }
        body = Buffer.concat(parts);
      } else {
        const length = Number(headers['content-length'] ?? 0);
        if (rest.length < length) return;
        body = rest.subarray(0, length);
        rest = rest.subarray(length);
      }
      this.buffer = rest;
      if (status >= 100 && status < 200) continue;
      this.pending.shift()?.resolve({ status, headers, body: body.toString('utf8'), receivedAt: performance.now() });
    }
  }
}
