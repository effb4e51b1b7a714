import { Catch } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AuthError, sendAuthError } from '../auth/auth.errors.js';
import { clientErrorOf, isUnavailable, prepareUnavailable } from '../errors/generic-errors.js';
import { UnstorableTextError } from '../errors/text-input.js';
import { TransportExceptionFilter } from '../errors/transport-exception.filter.js';
import { RateLimitError } from '../rate-limits/rate-limit.js';
import { OAuthError } from './oauth.errors.js';

/** An OAuth error response (RFC 6749 §5.2): never cached; a failed client authentication gets its Basic challenge. */
export function sendOAuthError(reply: FastifyReply, error: OAuthError): void {
  void reply.status(error.status).header('cache-control', 'no-store').header('pragma', 'no-cache');
  if (error.code === 'invalid_client') void reply.header('www-authenticate', 'Basic realm="agora", charset="UTF-8"');
  if (error.code === 'invalid_token') void reply.header('www-authenticate', 'Bearer realm="agora", error="invalid_token"');
  if (error.retryAfterSeconds !== undefined) void reply.header('retry-after', error.retryAfterSeconds);
  void reply.send(error.body);
}

/**
 * The OAuth endpoints' errors (OidcController: UserInfo, the JWKS, discovery): protocol errors in the
 * RFC 6749 shape, an unreachable database as `temporarily_unavailable` with `Retry-After`, a client (or
 * at UserInfo, a token) over its rate limit as `too_many_requests` (429, `Retry-After`), a missing or
 * rejected bearer token as RFC 6750 says. Anything else as elsewhere.
 */
@Catch()
export class OAuthExceptionFilter extends TransportExceptionFilter {
  protected answerInProtocol(error: unknown, request: FastifyRequest, reply: FastifyReply): boolean {
    if (error instanceof AuthError) sendAuthError(reply, error);
    else if (error instanceof OAuthError) sendOAuthError(reply, error);
    else if (error instanceof RateLimitError) sendOAuthError(reply, new OAuthError('too_many_requests', error.message));
    else if (isUnavailable(error)) {
      prepareUnavailable(request, reply, error);
      sendOAuthError(reply, new OAuthError('temporarily_unavailable', 'The service is temporarily unavailable; try again shortly'));
    } else return false;
    return true;
  }
}

/**
 * The endpoints clients call with their own credentials (TokenController: token, revoke, introspect):
 * every error they answer has the RFC 6749 §5.2 shape, text that cannot be stored and a request Fastify
 * could not read (a body that is not valid JSON, too large, of another media type) included.
 */
@Catch()
export class OAuthClientExceptionFilter extends OAuthExceptionFilter {
  protected override answerInProtocol(error: unknown, request: FastifyRequest, reply: FastifyReply): boolean {
    if (error instanceof UnstorableTextError) {
      sendOAuthError(reply, new OAuthError('invalid_request', `${error.field} ${error.reason}`));
      return true;
    }
    const client = clientErrorOf(error);
    if (client) {
      sendOAuthError(reply, new OAuthError('invalid_request', client.detail));
      return true;
    }
    return super.answerInProtocol(error, request, reply);
  }
}

/**
 * Dynamic client registration (RFC 7591 §3.2.2): a body that cannot be read (not JSON, too large, of
 * another media type, text that cannot be stored) is `invalid_client_metadata`, like metadata that is
 * read and refused; everything else as at the other OAuth endpoints.
 */
@Catch()
export class RegistrationExceptionFilter extends OAuthExceptionFilter {
  protected override answerInProtocol(error: unknown, request: FastifyRequest, reply: FastifyReply): boolean {
    const unreadable = error instanceof UnstorableTextError ? `${error.field} ${error.reason}` : clientErrorOf(error)?.detail;
    if (unreadable !== undefined) {
      sendOAuthError(reply, new OAuthError('invalid_client_metadata', unreadable));
      return true;
    }
    return super.answerInProtocol(error, request, reply);
  }
}

/** The client endpoints' addresses: what Fastify refuses there before TokenController runs is theirs too. */
export const OAUTH_CLIENT_ENDPOINTS: ReadonlySet<string> = new Set([
  '/oauth/token',
  '/oauth/revoke',
  '/oauth/introspect',
  '/oauth/device_authorization',
]);

export const oauthErrors = new OAuthExceptionFilter();
export const oauthClientErrors = new OAuthClientExceptionFilter();
export const registrationErrors = new RegistrationExceptionFilter();

/** Where RegistrationExceptionFilter answers what Fastify refuses before the handler runs. */
export const REGISTRATION_ENDPOINT = '/oauth/register';
