import { ArgumentsHost, Catch, ExceptionFilter, HttpException } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable, RETRY_AFTER_SECONDS } from '../errors/database-unavailable.js';
import { DomainError } from '../errors/domain-error.js';
import { clientErrorOf, otherMethods, pathOf, reportDatabaseUnavailable } from '../errors/generic-errors.js';
import { UnstorableTextError } from '../errors/text-input.js';
import { CsrfError } from './csrf.js';
import { errorPage, wantsHtml } from './error-pages.js';
import { SignInRequired } from './sign-in-required.js';
import { sendHtml } from './security-headers.js';

const STATUS_OF_DOMAIN_KIND = { invalid: 422, not_found: 404, conflict: 409, forbidden: 403, rate_limited: 429 } as const;

/**
 * Errors on page routes, answered as pages: sign in first (303 to the sign-in page, coming back to a
 * GET), a refused form (403), what a domain rule refused (another user's application is 404, as if it
 * did not exist), an unreachable database as a 503 page with `Retry-After`, and unknown errors as a 500 page, logged with the request id.
 */
@Catch()
export class PageExceptionFilter implements ExceptionFilter {
  catch(error: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const req = host.switchToHttp().getRequest<FastifyRequest>();
    if (reply.sent) return;
    if (error instanceof SignInRequired) {
      const location = error.returnTo ? `/sign-in?return_to=${encodeURIComponent(error.returnTo)}` : '/sign-in';
      void reply.header('cache-control', 'no-store').redirect(location, 303);
      return;
    }
    let status = 500;
    if (error instanceof CsrfError) {
      req.log.info({ reason: error.message }, 'Form refused');
      status = 403;
    } else if (error instanceof UnstorableTextError) status = 400;
    else if (error instanceof DomainError) status = STATUS_OF_DOMAIN_KIND[error.kind];
    else if (error instanceof HttpException) status = error.getStatus();
    else if (isDatabaseUnavailable(error)) {
      reportDatabaseUnavailable(req, error);
      void reply.header('retry-after', String(RETRY_AFTER_SECONDS));
      status = 503;
    } else req.log.error({ err: error }, 'Page failed');
    sendHtml(reply, errorPage(status, req.id), { status });
  }
}

/**
 * What reaches the global filter that is the pages' to answer (registered by WebModule): on a page
 * route, a request Fastify refused before the handler ran (a body too large or of another media type)
 * gets the HTML error page too; and a browser asking for an address that is no route (a mistyped page)
 * gets an HTML error page, 405 with `Allow` when the address answers other methods. Anything under the
 * APIs, and every client that does not ask for HTML, is left to the JSON answers.
 */
export function answerBeforePageHandler(error: unknown, request: FastifyRequest, reply: FastifyReply): boolean {
  if (error instanceof HttpException && isBrowserNavigationOffRoute(request)) {
    const allowed = error.getStatus() === 404 ? otherMethods(request) : [];
    if (allowed.length > 0) void reply.header('allow', allowed.join(', '));
    const shown = allowed.length > 0 ? 405 : error.getStatus();
    sendHtml(reply, errorPage(shown, request.id), { status: shown });
    return true;
  }
  const client = request.routeOptions?.config?.page ? clientErrorOf(error) : undefined;
  if (!client) return false;
  sendHtml(reply, errorPage(client.status, request.id), { status: client.status });
  return true;
}

/** The addresses of the APIs: JSON for every client, browsers included. */
const API_ADDRESS = /^\/(api|graphql|mcp|oauth|\.well-known)(\/|$)/;

/** Whether an address that is no route (or not yet known to be one) belongs to the APIs, which answer JSON. */
export function isApiAddress(path: string): boolean {
  return API_ADDRESS.test(path);
}

function isBrowserNavigationOffRoute(request: FastifyRequest): boolean {
  if (request.routeOptions?.url !== undefined || !wantsHtml(request.headers.accept)) return false;
  return !isApiAddress(pathOf(request));
}
