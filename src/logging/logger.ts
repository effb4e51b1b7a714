import type { LoggerService } from '@nestjs/common';
import cluster from 'node:cluster';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import pino, { Logger } from 'pino';
import { AppConfig } from '../config/config.schema.js';

const SECRET_QUERY_PARAMS = /([?&](?:access_token|private_token|token|code|code_verifier|client_secret|password|state|nonce)=)[^&#]*/gi;

/** A URL fit for logs: the values of credential-bearing query parameters replaced. */
export function redactUrl(url: string): string {
  return url.replace(SECRET_QUERY_PARAMS, '$1[REDACTED]');
}

/** pino's error serializer, minus the bound values of failed SQL (they can hold password hashes or emails). */
export function serializeError(err: Error): Record<string, unknown> {
  const { parameters: _parameters, driverError: _driverError, ...rest } = pino.stdSerializers.err(err) as Record<string, unknown>;
  return rest;
}

/**
 * JSON logs on stdout. Credentials never appear: headers are not logged, secret query values are masked.
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
          '*.password',
          '*.token',
          '*.clientSecret',
        ],
        censor: '[REDACTED]',
      },
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
