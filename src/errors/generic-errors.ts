import { HttpException, HttpStatus } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { STATUS_CODES } from 'node:http';
import { isDatabaseUnavailable, RETRY_AFTER_SECONDS } from './database-unavailable.js';
import { repeatedFailures } from '../logging/repeated-failures.js';
import { DomainError, DomainErrorKind, failuresOf } from './domain-error.js';
import { UnstorableTextError } from './text-input.js';

const STATUS_OF_KIND: Record<DomainErrorKind, number> = {
  invalid: HttpStatus.UNPROCESSABLE_ENTITY,
  not_found: HttpStatus.NOT_FOUND,
  conflict: HttpStatus.CONFLICT,
  forbidden: HttpStatus.FORBIDDEN,
  rate_limited: HttpStatus.TOO_MANY_REQUESTS,
};

/** `{"message": "404 Not Found"}`: the status line as the message, GitLab-style. */
export function statusMessage(status: number): string {
  return `${status} ${STATUS_CODES[status] ?? 'Error'}`;
}

/** How a transport names a domain error's field (a path such as `venue.country`) in its bodies. */
export type FieldName = (field: string) => string;
const asIs: FieldName = (field) => field;

/**
 * The generic mapping from errors to JSON responses, transport-neutral: what every transport's filter
 * falls back to once it has answered the errors of its own protocol, and what the global
 * FallbackExceptionFilter answers when no feature claims an error. Unknown errors become a generic 500,
 * logged with the request id; their text never reaches the client.
 */
export function answerGenerically(error: unknown, request: FastifyRequest, reply: FastifyReply, fieldName: FieldName = asIs): void {
  if (error instanceof UnstorableTextError) {
    sendUnstorableText(reply, error, fieldName);
    return;
  }
  if (error instanceof DomainError) {
    sendDomainError(reply, error, fieldName);
    return;
  }
  if (error instanceof HttpException) {
    const status = error.getStatus();
    const detail = fastifyClientError(error.cause);
    const allowed = status === 404 ? otherMethods(request) : [];
    if (detail) void reply.status(status).send({ message: statusMessage(status), error: detail });
    else if (allowed.length > 0)
      void reply
        .status(405)
        .header('allow', allowed.join(', '))
        .send({ message: statusMessage(405) });
    else void reply.status(status).send({ message: statusMessage(status) });
    return;
  }
  const client = clientErrorOf(error);
  if (client) {
    void reply.status(client.status).send({ message: statusMessage(client.status), error: client.detail });
    return;
  }
  if (isDatabaseUnavailable(error)) {
    reportDatabaseUnavailable(request, error);
    void reply.header('retry-after', String(RETRY_AFTER_SECONDS));
    void reply.status(503).send({ message: statusMessage(503) });
    return;
  }
  request.log.error({ err: error }, 'Request failed');
  void reply.status(500).send({ message: statusMessage(500) });
}

/** A domain error: its kind's status, its message and code, and the message of each invalid field. */
export function sendDomainError(reply: FastifyReply, error: DomainError, fieldName: FieldName = asIs): void {
  const errors: Record<string, string[]> = {};
  for (const failure of failuresOf(error)) {
    if (failure.field) (errors[fieldName(failure.field)] ??= []).push(failure.message);
  }
  void reply.status(STATUS_OF_KIND[error.kind]).send({
    message: error.message,
    code: error.code,
    ...(Object.keys(errors).length > 0 ? { errors } : {}),
  });
}

/** Text that cannot be stored: 400 with the reason under the field's name. */
export function sendUnstorableText(reply: FastifyReply, error: UnstorableTextError, fieldName: FieldName = asIs): void {
  void reply.status(400).send({ message: statusMessage(400), errors: { [fieldName(error.field)]: [error.reason] } });
}

/**
 * A request the edge refuses before routing for breaking HTTP itself (an HTTP/1.1 request without
 * Host, which Node would answer with a bare 400 of its own): answered like Fastify's client errors.
 */
export class MalformedRequestError extends Error {
  readonly statusCode = 400;
  readonly code = 'AGORA_MALFORMED_REQUEST';

  constructor(message: string) {
    super(message);
    this.name = 'MalformedRequestError';
  }
}

/**
 * The message of one of Fastify's own client errors (a body that is not valid JSON, too large, of an
 * unsupported media type), which Nest hands over wrapped in an HttpException; these messages say
 * what is wrong with the request and nothing about the server.
 */
export function fastifyClientError(error: unknown): string | undefined {
  if (error instanceof MalformedRequestError) return error.message;
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return typeof code === 'string' && code.startsWith('FST_') && typeof message === 'string' ? message : undefined;
}

/**
 * A request Fastify could not read (refused before any handler ran), wrapped by Nest in an
 * HttpException or not: its status and what was wrong. Undefined for every other error.
 */
export function clientErrorOf(error: unknown): { status: number; detail: string } | undefined {
  if (error instanceof HttpException) {
    const detail = fastifyClientError(error.cause);
    return detail ? { status: error.getStatus(), detail } : undefined;
  }
  const status = (error as { statusCode?: unknown } | null | undefined)?.statusCode;
  const detail = fastifyClientError(error);
  return typeof status === 'number' && status >= 400 && status < 500 && detail ? { status, detail } : undefined;
}

/**
 * Whether the generic mapping would answer this error as an unreachable database (503): not an error
 * it answers otherwise first, whatever its cause says. Transports answer it in their own shape.
 */
export function isUnavailable(error: unknown): boolean {
  if (error instanceof UnstorableTextError || error instanceof DomainError || error instanceof HttpException) return false;
  return !clientErrorOf(error) && isDatabaseUnavailable(error);
}

/** Logged once per interval with a count: during an outage every request would say the same. */
export function reportDatabaseUnavailable(request: FastifyRequest, error: unknown): void {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  repeatedFailures.warn(
    request,
    'database-unavailable',
    { err: error },
    `Database unavailable: answering 503 (${String(code ?? message)})`,
  );
}

/** The database cannot be reached: logged (counted) and `Retry-After` set; the caller sends its 503. */
export function prepareUnavailable(request: FastifyRequest, reply: FastifyReply, error: unknown): void {
  reportDatabaseUnavailable(request, error);
  void reply.header('retry-after', String(RETRY_AFTER_SECONDS));
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/**
 * For a request that matched no route: the methods the same path does answer, so that `GET /oauth/token`
 * says 405 with `Allow: POST` rather than suggesting the address is wrong. Empty when the request's own
 * method has a route (a handler's own 404) or no method has one (an unknown path).
 */
export function otherMethods(request: FastifyRequest): string[] {
  const url = pathOf(request);
  const answers = (method: string) => request.server.findRoute({ method: method as 'GET', url }) !== null;
  if (answers(request.method)) return [];
  return METHODS.filter(answers);
}

/** The request's path, without the query string. */
export function pathOf(request: FastifyRequest): string {
  return request.url.split('?')[0] ?? '/';
}

/** The route a request matched (its pattern), or its path when it matched none. */
export function addressOf(request: FastifyRequest): string {
  return request.routeOptions?.url ?? pathOf(request);
}
