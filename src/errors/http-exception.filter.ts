import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { STATUS_CODES } from 'node:http';
import { AuthError } from '../auth/auth.errors.js';
import { OAUTH_CLIENT_ROUTES, OAuthError } from '../oauth/oauth.errors.js';
import { DomainError, DomainErrorKind, failuresOf } from './domain-error.js';
import { UnstorableTextError } from './text-input.js';
import { isDatabaseUnavailable, RETRY_AFTER_SECONDS } from '../database/database-unavailable.js';
import { repeatedFailures } from '../logging/repeated-failures.js';
import { GRAPHQL_PATH } from '../graphql/graphql-path.js';
import { errorPage, wantsHtml } from '../web/error-pages.js';
import { sendHtml } from '../web/security-headers.js';

const STATUS_OF_KIND: Record<DomainErrorKind, number> = {
  invalid: HttpStatus.UNPROCESSABLE_ENTITY,
  not_found: HttpStatus.NOT_FOUND,
  conflict: HttpStatus.CONFLICT,
  forbidden: HttpStatus.FORBIDDEN,
};

/** `{"message": "404 Not Found"}`: the status line as the message, GitLab-style. */
export function statusMessage(status: number): string {
  return `${status} ${STATUS_CODES[status] ?? 'Error'}`;
}

/**
 * The one mapping from errors to HTTP responses for controllers. Unknown errors become a generic 500,
 * logged with the request id; their text never reaches the client.
 */
@Catch()
export class HttpExceptionFilter implements ExceptionFilter {
  catch(error: unknown, host: ArgumentsHost): void {
    if (host.getType() !== 'http') throw error;
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    if (reply.sent) return;

    if (error instanceof AuthError) {
      void reply.status(error.status).header('www-authenticate', error.challenge).header('cache-control', 'no-store').send(error.body);
      return;
    }
    if (error instanceof OAuthError) {
      sendOAuthError(reply, error);
      return;
    }
    if (error instanceof UnstorableTextError) {
      sendUnstorableText(request, reply, error, this.fieldName(error.field));
      return;
    }
    if (error instanceof DomainError) {
      const errors: Record<string, string[]> = {};
      for (const failure of failuresOf(error)) {
        if (failure.field) (errors[this.fieldName(failure.field)] ??= []).push(failure.message);
      }
      void reply.status(STATUS_OF_KIND[error.kind]).send({
        message: error.message,
        code: error.code,
        ...(Object.keys(errors).length > 0 ? { errors } : {}),
      });
      return;
    }
    if (error instanceof HttpException) {
      const status = error.getStatus();
      const detail = fastifyClientError(error.cause);
      const allowed = status === 404 ? otherMethods(request) : [];
      if (isBrowserNavigationOffRoute(request)) {
        if (allowed.length > 0) void reply.header('allow', allowed.join(', '));
        const shown = allowed.length > 0 ? 405 : status;
        sendHtml(reply, errorPage(shown, request.id), { status: shown });
      } else if (detail) sendClientError(request, reply, status, detail);
      else if (allowed.length > 0)
        void reply
          .status(405)
          .header('allow', allowed.join(', '))
          .send({ message: statusMessage(405) });
      else void reply.status(status).send({ message: statusMessage(status) });
      return;
    }
    const status = (error as { statusCode?: unknown }).statusCode;
    const detail = fastifyClientError(error);
    if (typeof status === 'number' && status >= 400 && status < 500 && detail) {
      sendClientError(request, reply, status, detail);
      return;
    }
    if (isDatabaseUnavailable(error)) {
      reportDatabaseUnavailable(request, error);
      sendUnavailable(request, reply);
      return;
    }
    request.log.error({ err: error }, 'Request failed');
    void reply.status(500).send({ message: statusMessage(500) });
  }

  /** How a domain error's field (a path such as `venue.country`) is named in this edge's bodies. */
  protected fieldName(field: string): string {
    return field;
  }
}

function sendOAuthError(reply: FastifyReply, error: OAuthError): void {
  void reply.status(error.status).header('cache-control', 'no-store').header('pragma', 'no-cache');
  if (error.code === 'invalid_client') void reply.header('www-authenticate', 'Basic realm="agora", charset="UTF-8"');
  void reply.send(error.body);
}

/**
 * The message of one of Fastify's own client errors (a body that is not valid JSON, too large, of an
 * unsupported media type), which Nest hands over wrapped in an HttpException; these messages say
 * what is wrong with the request and nothing about the server.
 */
function fastifyClientError(error: unknown): string | undefined {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return typeof code === 'string' && code.startsWith('FST_') && typeof message === 'string' ? message : undefined;
}

/** Text that cannot be stored, refused with the client error of the endpoint's own protocol. */
function sendUnstorableText(request: FastifyRequest, reply: FastifyReply, error: UnstorableTextError, field: string): void {
  const route = request.routeOptions?.url;
  if (route && OAUTH_CLIENT_ROUTES.has(route)) {
    sendOAuthError(reply, new OAuthError('invalid_request', `${field} ${error.reason}`));
  } else if (route === GRAPHQL_PATH) {
    void reply.status(400).send({ errors: [{ message: error.message, extensions: { code: 'BAD_USER_INPUT', field: error.field } }] });
  } else {
    void reply.status(400).send({ message: statusMessage(400), errors: { [field]: [error.reason] } });
  }
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

/**
 * The database cannot be reached: 503 with `Retry-After`, in the shape of the endpoint's protocol
 * (OAuth `temporarily_unavailable`, a GraphQL error, the REST status message).
 */
function sendUnavailable(request: FastifyRequest, reply: FastifyReply): void {
  const route = request.routeOptions?.url ?? request.url.split('?')[0] ?? '';
  void reply.header('retry-after', String(RETRY_AFTER_SECONDS));
  const description = 'The service is temporarily unavailable; try again shortly';
  if (route.startsWith('/oauth/')) {
    sendOAuthError(reply, new OAuthError('temporarily_unavailable', description));
  } else if (route === GRAPHQL_PATH) {
    void reply.status(503).send({ errors: [{ message: `${description}.`, extensions: { code: 'SERVICE_UNAVAILABLE' } }] });
  } else {
    void reply.status(503).send({ message: statusMessage(503) });
  }
}

/** A request Fastify could not read, answered in the shape its endpoint's callers expect: a page's is HTML. */
function sendClientError(request: FastifyRequest, reply: FastifyReply, status: number, detail: string): void {
  const route = request.routeOptions?.url ?? request.url.split('?')[0];
  if (request.routeOptions?.config?.page) {
    sendHtml(reply, errorPage(status, request.id), { status });
  } else if (route && OAUTH_CLIENT_ROUTES.has(route)) {
    sendOAuthError(reply, new OAuthError('invalid_request', detail));
  } else if (route === GRAPHQL_PATH) {
    void reply.status(status).send({ errors: [{ message: detail, extensions: { code: 'BAD_REQUEST' } }] });
  } else {
    void reply.status(status).send({ message: statusMessage(status), error: detail });
  }
}

/**
 * A browser asking for an address that is no route (a mistyped page): it gets an HTML error page.
 * Anything under the APIs, and every client that does not ask for HTML, gets JSON.
 */
function isBrowserNavigationOffRoute(request: FastifyRequest): boolean {
  if (request.routeOptions?.url !== undefined || !wantsHtml(request.headers.accept)) return false;
  const path = request.url.split('?')[0] ?? '/';
  return !/^\/(api|graphql|oauth|\.well-known)(\/|$)/.test(path);
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/**
 * For a request that matched no route: the methods the same path does answer, so that `GET /oauth/token`
 * says 405 with `Allow: POST` rather than suggesting the address is wrong. Empty when the request's own
 * method has a route (a handler's own 404) or no method has one (an unknown path).
 */
function otherMethods(request: FastifyRequest): string[] {
  const url = request.url.split('?')[0] ?? '/';
  const answers = (method: string) => request.server.findRoute({ method: method as 'GET', url }) !== null;
  if (answers(request.method)) return [];
  return METHODS.filter(answers);
}
