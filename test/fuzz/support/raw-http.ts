import { connect } from 'node:net';

/**
 * HTTP/1.1 written byte for byte. fetch normalises what the fuzz tier wants to send as is: it
 * re-encodes URLs, strips tabs and newlines from them, and refuses header values with bytes over
 * 0xFF or a NUL. Every fuzzed request goes through here, so what is sent is exactly what was generated.
 */

export interface RawRequest {
  method: string;
  /** The request target as sent: path and query, already encoded (or not) by the caller. */
  target: string;
  /** Header lines; a Buffer value is sent as its bytes, a string as UTF-8. */
  headers?: [string, string | Buffer][];
  body?: string | Buffer;
}

export interface Answer {
  status: number;
  headers: Record<string, string>;
  setCookies: string[];
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
}

const TIMEOUT_MS = 20_000;

export function sendRaw(baseUrl: string, request: RawRequest): Promise<Answer> {
  const { hostname, port, host } = new URL(baseUrl);
  const body = request.body === undefined ? undefined : Buffer.isBuffer(request.body) ? request.body : Buffer.from(request.body, 'utf8');
  const lines: Buffer[] = [
    Buffer.from(`${request.method} `),
    Buffer.from(request.target, 'utf8'),
    Buffer.from(` HTTP/1.1\r\nHost: ${host}\r\n`),
  ];
  const names = new Set((request.headers ?? []).map(([name]) => name.toLowerCase()));
  for (const [name, value] of request.headers ?? []) {
    lines.push(Buffer.from(`${name}: `, 'utf8'), Buffer.isBuffer(value) ? value : Buffer.from(value, 'utf8'), Buffer.from('\r\n'));
  }
  if (!names.has('connection')) lines.push(Buffer.from('Connection: close\r\n'));
  if (body !== undefined && !names.has('content-length') && !names.has('transfer-encoding'))
    lines.push(Buffer.from(`Content-Length: ${body.length}\r\n`));
  lines.push(Buffer.from('\r\n'));
  const head = Buffer.concat(lines);

  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = (error?: Error) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      const received = Buffer.concat(chunks);
      // A server may answer (413, 400) and close before a large body is written: the answer counts.
      if (received.length > 0) {
        try {
          resolve(parseResponse(received));
          return;
        } catch (parseError) {
          reject(parseError as Error);
          return;
        }
      }
      reject(error ?? new Error(`${request.method} ${request.target.slice(0, 200)}: connection closed without a response`));
    };
    socket.setTimeout(TIMEOUT_MS, () =>
      finish(new Error(`${request.method} ${request.target.slice(0, 200)}: no response in ${TIMEOUT_MS} ms`)),
    );
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', () => finish());
    socket.on('close', () => finish());
    socket.on('error', (error) => finish(error));
    socket.write(head);
    if (body !== undefined) socket.write(body);
  });
}

function parseResponse(received: Buffer): Answer {
  const split = received.indexOf('\r\n\r\n');
  if (split === -1) throw new Error(`not an HTTP response: ${received.subarray(0, 200).toString('latin1')}`);
  const [statusLine, ...headerLines] = received.subarray(0, split).toString('latin1').split('\r\n');
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '');
  if (!match) throw new Error(`not an HTTP status line: ${statusLine}`);
  const headers: Record<string, string> = {};
  const setCookies: string[] = [];
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === 'set-cookie') setCookies.push(value);
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  let body = received.subarray(split + 4);
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) body = dechunk(body);
  const text = body.toString('utf8');
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: Number(match[1]), headers, setCookies, text, json };
}

function dechunk(body: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  while (at < body.length) {
    const lineEnd = body.indexOf('\r\n', at);
    if (lineEnd === -1) break;
    const size = parseInt(body.subarray(at, lineEnd).toString('latin1'), 16);
    if (!size) break;
    parts.push(body.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(parts);
}

/** One line of an answer for a failure message: status, a few headers, the start of the body. */
export function describeAnswer(answer: Answer): string {
  const type = answer.headers['content-type'] ?? '-';
  return `${answer.status} (${type}) ${answer.text.slice(0, 600)}`;
}
