import type { LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import { DEFAULT_TIMEOUT_MS, defaultResolver, resolveTarget, seconds, type OutboundOptions } from './target-resolution.js';
import { urlHost, urlProblem, type TargetPolicy } from './target-url.js';

/** One attempt's request: POSTed with these headers plus Content-Type (application/json unless given) and Content-Length. */
export interface WebhookRequest {
  url: string;
  /** The signature headers and the User-Agent; names in any case, a Host header ignored. */
  headers: Record<string, string>;
  /** The exact JSON text (webhook_messages.body), or a body of `contentType`. */
  body: string;
  /** The body's media type when it is not JSON (an OpenID Connect logout token is posted as a form). */
  contentType?: 'application/json' | 'application/x-www-form-urlencoded';
}

/** How an attempt went, as the delivery log records it (webhook_attempts). */
export interface WebhookResponse {
  /** 2xx: succeeded; anything else (3xx included: redirects are not followed), a timeout or a refusal: failed. */
  outcome: 'succeeded' | 'failed';
  status: number | null;
  /** The response's first bytes as text (at most 2,048 characters). */
  bodyExcerpt: string | null;
  /**
   * Why it failed, in words for the delivery log (at most 500 characters): set when there is no status
   * (refused target, timeout, connection or TLS error) and for a redirect; null otherwise.
   */
  error: string | null;
  durationMs: number;
}

/** How much of a response is read before the connection is closed. */
export const MAX_RESPONSE_BYTES = 64 * 1024;
/** How much of it the delivery log keeps (characters). */
export const EXCERPT_CHARS = 2048;
const MAX_ERROR_CHARS = 500;

/**
 * POSTs one delivery: the name resolved once and the connection made to that checked address (no DNS
 * rebinding), no redirects, 10 s for the whole exchange, the response read up to a cap. Never throws
 * for anything the target does.
 *
 * - The URL is checked as urlProblem does, then the name resolved once (c-ares, cancelled at the
 *   deadline; getaddrinfo only with policy.allowPrivateTargets); every address must be public (unless
 *   allowed; cloud metadata addresses never are), and a refused name is refused in one sentence that
 *   names none of its addresses. The socket gets a lookup that answers only those addresses, so
 *   it connects to what was checked, while TLS (SNI, certificate name) and the Host header use the name.
 * - The deadline (options.timeoutMs, 10 s) covers resolution, connection, TLS, request and response.
 *   Once the status line has arrived, the status decides: a body still arriving at the deadline, or
 *   larger than 64 KiB, is cut there and the attempt keeps its status (a 200 with a 1 MB body succeeds).
 *   The receiver has answered; failing it would only make it receive the same message again.
 * - A 3xx fails with "redirect to <Location> not followed"; the Location is never requested.
 * - The excerpt is the first 2,048 characters of what was read, decoded as UTF-8 (invalid bytes and NUL
 *   become U+FFFD), so that PostgreSQL text takes it.
 */
export async function postWebhook(request: WebhookRequest, policy: TargetPolicy, options: OutboundOptions = {}): Promise<WebhookResponse> {
  const started = performance.now();
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const result = (fields: Pick<WebhookResponse, 'outcome' | 'status' | 'bodyExcerpt' | 'error'>): WebhookResponse => ({
    ...fields,
    error: fields.error?.slice(0, MAX_ERROR_CHARS) ?? null,
    durationMs: Math.round(performance.now() - started),
  });
  const failed = (error: string) => result({ outcome: 'failed', status: null, bodyExcerpt: null, error });

  const problem = urlProblem(request.url, policy);
  if (problem) return failed(`refused: ${problem}`);
  const url = new URL(request.url);
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), timeoutMs);
  const timedOut = `timed out after ${seconds(timeoutMs)}`;
  try {
    const target = await untilAborted(
      resolveTarget(urlHost(url), policy, options.resolve ?? defaultResolver(policy), deadline.signal),
      deadline.signal,
    );
    if (!target) return failed(timedOut);
    if ('problem' in target) return failed(`refused: ${target.problem}`);
    const answer = await exchange(url, { method: 'POST', ...request, maxBytes: MAX_RESPONSE_BYTES }, target.addresses, deadline.signal);
    const status = answer.status;
    const bodyExcerpt = excerpt(answer.body);
    if (status >= 200 && status < 300) return result({ outcome: 'succeeded', status, bodyExcerpt, error: null });
    const error = status >= 300 && status < 400 ? `redirect to ${answer.location ?? '(no Location header)'} not followed` : null;
    return result({ outcome: 'failed', status, bodyExcerpt, error });
  } catch (error) {
    return failed(deadline.signal.aborted ? timedOut : describeError(error));
  } finally {
    clearTimeout(timer);
  }
}

/** One outbound request: a webhook's POST (with a JSON body), or a GET (a client's JWKS). */
export interface OutboundRequest {
  method: 'GET' | 'POST';
  /** Names in any case, a Host header ignored; the User-Agent defaults to Agora-Webhooks/1. */
  headers: Record<string, string>;
  /** The body: JSON text unless `contentType` says otherwise. */
  body?: string;
  contentType?: 'application/json' | 'application/x-www-form-urlencoded';
  /** How much of the response is read before the connection is closed. */
  maxBytes: number;
}

export interface Answer {
  status: number;
  location: string | undefined;
  /** At most the request's maxBytes. */
  body: Buffer;
  /** Whether the response reached maxBytes (anything after it was never read). */
  truncated: boolean;
}

/** One request to the checked addresses (resolveTarget's); rejects only before a status line arrived. */
export function exchange(url: URL, request: OutboundRequest, addresses: LookupAddress[], signal: AbortSignal): Promise<Answer> {
  const host = urlHost(url);
  const headers: Record<string, string | number> = { 'user-agent': 'Agora-Webhooks/1' };
  for (const [name, value] of Object.entries(request.headers)) headers[name.toLowerCase()] = value;
  delete headers.host;
  if (request.body !== undefined) {
    headers['content-type'] = request.contentType ?? 'application/json';
    headers['content-length'] = Buffer.byteLength(request.body);
  }

  return new Promise<Answer>((resolve, reject) => {
    const transport = url.protocol === 'https:' ? https : http;
    const outgoing = transport.request({
      host,
      port: url.port || undefined,
      path: `${url.pathname}${url.search}`,
      method: request.method,
      headers,
      agent: false,
      lookup: pinnedLookup(addresses),
      servername: isIP(host) ? undefined : host,
      signal,
    });
    let answered = false;
    outgoing.on('error', (error) => answered || reject(error));
    outgoing.on('response', (incoming) => {
      answered = true;
      const chunks: Buffer[] = [];
      let size = 0;
      let truncated = false;
      const settle = () => {
        resolve({ status: incoming.statusCode ?? 0, location: incoming.headers.location, body: Buffer.concat(chunks), truncated });
        outgoing.destroy();
      };
      incoming.on('data', (chunk: Buffer) => {
        const room = request.maxBytes - size;
        if (room <= 0) return;
        chunks.push(chunk.subarray(0, room));
        size += Math.min(chunk.length, room);
        if (chunk.length >= room) {
          truncated = true; // the cap: the rest is never read
          settle();
        }
      });
      incoming.on('error', () => undefined); // a body cut short (the deadline, a reset) keeps what arrived
      incoming.on('end', settle);
      incoming.on('close', settle);
    });
    outgoing.end(request.body);
  });
}

/**
 * The `lookup` of the socket: answers the addresses already resolved and checked, never the resolver,
 * so a name that resolves differently a moment later (DNS rebinding) cannot move the connection.
 */
function pinnedLookup(addresses: LookupAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) callback(null, addresses);
    else callback(null, addresses[0]!.address, addresses[0]!.family);
  };
}

/** Resolves with the promise's value, or with undefined once the signal aborts. */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  return new Promise<T | undefined>((resolve, reject) => {
    signal.addEventListener('abort', () => resolve(undefined), { once: true });
    promise.then(resolve, reject);
  });
}

function excerpt(body: Buffer): string {
  return Array.from(body.toString('utf8').replaceAll('\u0000', '\ufffd')).slice(0, EXCERPT_CHARS).join('');
}

const PLAIN_WORDS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset by the receiver',
  EPIPE: 'connection closed by the receiver',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EADDRNOTAVAIL: 'address not available',
};

/**
 * Node 22.15 and later end some certificate errors with advice for whoever runs Node ("…; if the root CA
 * is installed locally, try running Node.js with --use-system-ca"). The delivery log is read by the
 * receiver's owner, who cannot act on it, and its wording must not change with the Node line.
 */
function withoutNodeHint(message: string): string {
  return message.replace(/; if the root CA is installed locally.*$/s, '');
}

/** An error of the request in words for the delivery log. */
export function describeError(error: unknown): string {
  const { code, message } = error as NodeJS.ErrnoException;
  if (message === 'socket hang up') return 'connection closed before a response';
  if (code && PLAIN_WORDS[code]) return PLAIN_WORDS[code];
  if (code && /CERT|SIGNATURE|ISSUER|ALTNAME/.test(code)) return `TLS certificate error: ${withoutNodeHint(message)}`;
  if (code?.startsWith('ERR_SSL') || code?.startsWith('ERR_TLS')) return `TLS error: ${message}`;
  if (code?.startsWith('HPE_')) return `invalid HTTP response (${message})`;
  return message || String(error);
}
