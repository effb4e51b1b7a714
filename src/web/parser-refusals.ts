import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { statusMessage } from '../errors/generic-errors.js';
import { errorPage, wantsHtml } from './error-pages.js';
import { isApiAddress } from './page-exception.filter.js';

/**
 * Answers to requests that never become requests: Node's HTTP parser refuses the bytes (an unknown
 * method such as `FOO`, a malformed request line or header, a bad Content-Length, headers over 16 KB, a
 * request not received in time) and emits `clientError` on the server, so no route, hook or filter of
 * Fastify's or ours runs. Fastify's default handler wrote its own JSON without the security headers or
 * a request id; this one writes the answer every other refusal gets: the security headers, an
 * `X-Request-Id` (new: the request's own was never read), `Cache-Control: no-store`, and the body in the
 * shape of the transport the request line names (GraphQL errors, RFC 6749 JSON, an HTML error page for
 * a browser outside the APIs' addresses, the REST `{"message", "error"}` otherwise). The connection is closed after it: what
 * follows the refused bytes cannot be read.
 */

export interface ParserRefusalOptions {
  /** The security headers every answer carries (securityHeaders()). */
  headers: Record<string, string>;
  /** Paths whose clients read RFC 6749 error JSON (the OAuth client endpoints and registration). */
  oauthPaths: ReadonlySet<string>;
  /** Logs the refusal with its request id (the server's logger). */
  log: (fields: Record<string, unknown>, message: string) => void;
}

/** What was wrong, by the parser's error code, in words a client developer can act on. */
const DETAILS: Record<string, string> = {
  HPE_INVALID_METHOD: 'The request method is not one this server knows',
  HPE_INVALID_URL: 'The request target is not a valid URL path',
  HPE_INVALID_CONSTANT: 'The request line is not an HTTP/1.1 request line',
  HPE_INVALID_VERSION: 'The HTTP version is not supported',
  HPE_INVALID_HEADER_TOKEN: 'A header name or value contains a character HTTP does not allow there',
  HPE_LF_EXPECTED: 'A line of the request does not end with CR LF',
  HPE_CR_EXPECTED: 'A line of the request does not end with CR LF',
  HPE_INVALID_CONTENT_LENGTH: 'Content-Length is not one number',
  HPE_UNEXPECTED_CONTENT_LENGTH: 'Content-Length and Transfer-Encoding must not both be sent',
  HPE_INVALID_TRANSFER_ENCODING: 'Transfer-Encoding must end with chunked',
  HPE_INVALID_CHUNK_SIZE: 'The chunked body is malformed',
  HPE_HEADER_OVERFLOW: 'The request headers are larger than 16 KB',
  ERR_HTTP_REQUEST_TIMEOUT: 'The request was not received in time',
  CONNECT: 'This server is not a proxy: CONNECT is not supported',
};
const DEFAULT_DETAIL = 'The request is not valid HTTP/1.1';

function statusOf(code: string | undefined): number {
  if (code === 'HPE_HEADER_OVERFLOW') return 431;
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return 408;
  return 400;
}

type Shape = 'graphql' | 'oauth' | 'html' | 'rest';

/** The path and Accept header of the refused request, as far as its first bytes say (never trusted beyond choosing a shape). */
function readHead(raw: unknown): { path: string; accept: string | undefined } {
  if (!Buffer.isBuffer(raw)) return { path: '', accept: undefined };
  const head = raw.subarray(0, 16 * 1024).toString('latin1');
  const target = /^[^ \r\n]* +([^ \r\n]*)/.exec(head)?.[1] ?? '';
  // The path ends where a URL path cannot go on: the query, a fragment, a control byte (the refused one).
  let end = 0;
  while (
    end < target.length &&
    target[end] !== '?' &&
    target[end] !== '#' &&
    target.charCodeAt(end) > 0x20 &&
    target.charCodeAt(end) !== 0x7f
  )
    end++;
  const accept = /\r\naccept[ \t]*:[ \t]*([^\r\n]*)/i.exec(head)?.[1];
  return { path: target.slice(0, end), accept };
}

function shapeOf(path: string, accept: string | undefined, oauthPaths: ReadonlySet<string>): Shape {
  if (path === '/graphql') return 'graphql';
  if (oauthPaths.has(path)) return 'oauth';
  // As for a browser asking for an address that is no route (PageExceptionFilter): HTML outside the APIs.
  if (!isApiAddress(path) && wantsHtml(accept)) return 'html';
  return 'rest';
}

function body(shape: Shape, status: number, detail: string, requestId: string): { type: string; text: string } {
  const json = 'application/json; charset=utf-8';
  switch (shape) {
    case 'graphql':
      return { type: json, text: JSON.stringify({ errors: [{ message: detail, extensions: { code: 'BAD_REQUEST' } }] }) };
    case 'oauth':
      return { type: json, text: JSON.stringify({ error: 'invalid_request', error_description: detail }) };
    case 'html':
      return { type: 'text/html; charset=utf-8', text: errorPage(status, requestId) };
    default:
      return { type: json, text: JSON.stringify({ message: statusMessage(status), error: detail }) };
  }
}

/** The full HTTP/1.1 answer to a refused request, with its request id. */
export function parserRefusal(
  error: { code?: string; rawPacket?: unknown },
  options: Pick<ParserRefusalOptions, 'headers' | 'oauthPaths'>,
): { requestId: string; status: number; response: Buffer } {
  const status = statusOf(error.code);
  const requestId = randomUUID();
  const { path, accept } = readHead(error.rawPacket);
  const { type, text } = body(shapeOf(path, accept, options.oauthPaths), status, DETAILS[error.code ?? ''] ?? DEFAULT_DETAIL, requestId);
  const content = Buffer.from(text, 'utf8');
  const fields: Record<string, string> = {
    ...options.headers,
    'x-request-id': requestId,
    'content-type': type,
    'content-length': String(content.length),
    'cache-control': 'no-store',
    connection: 'close',
  };
  const head = `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${Object.entries(fields)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')}\r\n`;
  return { requestId, status, response: Buffer.concat([Buffer.from(head, 'latin1'), content]) };
}

/** Fastify's `clientErrorHandler`: writes parserRefusal() and closes the connection. */
export function parserRefusalHandler(options: ParserRefusalOptions): (error: Error & { code?: string }, socket: Socket) => void {
  return (error, socket) => {
    // A reset connection, or one already gone: nobody to answer.
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    // A response of an earlier request on this connection still being written: a second one would be
    // written into it (Node's own handler holds back the same way).
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (!socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const refusal = parserRefusal(error as { code?: string; rawPacket?: unknown }, options);
    options.log({ reqId: refusal.requestId, res: { statusCode: refusal.status }, code: error.code }, 'Request refused by the HTTP parser');
    sendAndClose(socket, refusal.response);
  };
}

/** Writes the answer and closes: the client may keep sending, but once the answer is out the connection need not wait for it. */
export function sendAndClose(socket: Socket, response: Buffer): void {
  socket.end(response);
  setTimeout(() => socket.destroy(), 1000).unref();
}
