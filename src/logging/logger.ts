import type { LoggerService } from '@nestjs/common';
import cluster from 'node:cluster';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import pino, { Logger } from 'pino';
import { AppConfig } from '../config/config.schema.js';

/**
 * Query parameters whose values are logged as sent: each is read by some route, none carries a secret
 * or an address a secret could hide in (`return_to`, `redirect_uri` and `post_logout_redirect_uri` can
 * hold a whole URL with its own query, so they are not here). Every other value is replaced.
 */
const LOGGED_QUERY_VALUES = new Set([
  'response_type',
  'response_mode',
  'client_id',
  'scope',
  'prompt',
  'max_age',
  'code_challenge_method',
  'ui_locales',
  'reauth',
  'first',
  'after',
  'last',
  'before',
  'page',
  'per_page',
  'sort',
  'status',
  'organizer',
  'starts_after',
  'starts_before',
]);

/** A parameter name logged as sent; anything else (a token sent as a bare `?value`, say) is replaced too. */
const PLAIN_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,39}$/;

export const REDACTED = '[REDACTED]';

/**
 * A request URL fit for logs and traces, by allow-list: the path as sent, the name of each query
 * parameter, and the value only of the parameters in LOGGED_QUERY_VALUES. So a secret in any query
 * parameter, named or not yet thought of (`user_code`, `id_token_hint`, `code`, `access_token`, a
 * `return_to` that carries either), never reaches a log line or a span.
 */
export function redactUrl(url: string): string {
  const mark = url.indexOf('?');
  if (mark < 0) return url;
  return `${url.slice(0, mark)}?${redactQuery(url.slice(mark + 1))}`;
}

/** A query string (without `?`) with every value replaced but the allow-listed ones. */
export function redactQuery(query: string): string {
  return query
    .split('&')
    .map((pair) => {
      if (pair === '') return pair;
      const equals = pair.indexOf('=');
      const name = decodedName(equals < 0 ? pair : pair.slice(0, equals));
      if (name === undefined || !PLAIN_NAME.test(name)) return REDACTED;
      if (equals < 0) return name;
      return LOGGED_QUERY_VALUES.has(name) ? pair : `${name}=${REDACTED}`;
    })
    .join('&');
}

function decodedName(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

/**
 * Anything shaped like a secret Agora issues (`agora_pat_…` and the other prefixed tokens) or like a
 * JWT (an id_token), wherever in a line it appears: in an error message that quotes its input, a
 * value a future field forgets to name. The URL allow-list and the serializers keep secrets out; this
 * is the net under them, applied to every line as it is written.
 */
const SECRET_SHAPES = /agora_[a-z]{3}_[0-9A-Za-z]{20,}|eyJ[0-9A-Za-z_-]{8,}\.eyJ[0-9A-Za-z_-]{8,}\.[0-9A-Za-z_-]*/g;

/** A written log line with every secret-shaped string replaced. */
export function scrubLine(line: string): string {
  return line.replace(SECRET_SHAPES, REDACTED);
}

/** pino's error serializer, minus the bound values of failed SQL (they can hold password hashes or emails). */
export function serializeError(err: Error): Record<string, unknown> {
  const { parameters: _parameters, driverError: _driverError, ...rest } = pino.stdSerializers.err(err) as Record<string, unknown>;
  return rest;
}

/**
 * JSON logs on stdout. Credentials never appear: headers and bodies are not logged, a request URL is logged
 * by allow-list (redactUrl), and every line passes scrubLine on its way out.
 * In a worker of WORKERS > 1, every line names the worker (its node:cluster id) and its pid, as the
 * workers share one output.
 *
 * Each line is written synchronously (pino's default destination writes asynchronously): every exit path
 * logs why and then calls process.exit, and an asynchronous write still in flight then is lost, or lands
 * after the lines written at exit, so the last lines of a stopping process would be missing or out of order.
 */
export function createLogger(config: Pick<AppConfig, 'logLevel'>, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level: config.logLevel,
      base: cluster.isWorker ? { service: 'agora', worker: cluster.worker!.id, pid: process.pid } : { service: 'agora' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: [
          'req.headers.authorization',
          'req.headers["private-token"]',
          'req.headers.cookie',
          'req.headers["set-cookie"]',
          '*.password',
          '*.token',
          '*.clientSecret',
          '*.client_secret',
          '*.access_token',
          '*.refresh_token',
          '*.id_token',
          '*.device_code',
          '*.user_code',
          '*.code_verifier',
        ],
        censor: REDACTED,
      },
      hooks: { streamWrite: scrubLine },
      serializers: {
        req: (req: { method: string; url: string; ip?: string; id?: string }) => ({
          method: req.method,
          url: redactUrl(req.url),
          ip: req.ip,
        }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
        err: serializeError,
      },
    },
    destination ?? pino.destination({ dest: 1, sync: true }),
  );
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Keeps a well-formed X-Request-Id from the caller (or a proxy), else makes one. */
export function requestId(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
}

/** Nest's own log lines, through the same pino logger. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, context?: string): void {
    this.logger.info({ context }, String(message));
  }
  error(message: unknown, trace?: string, context?: string): void {
    this.logger.error({ context, trace }, String(message));
  }
  warn(message: unknown, context?: string): void {
    this.logger.warn({ context }, String(message));
  }
  debug(message: unknown, context?: string): void {
    this.logger.debug({ context }, String(message));
  }
  verbose(message: unknown, context?: string): void {
    this.logger.trace({ context }, String(message));
  }
}
