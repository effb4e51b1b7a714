import { applyDecorators, UseFilters } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOperation,
  ApiQuery,
  ApiSecurity,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { Public, RequireScopes } from '../auth/public.decorator.js';
import { LegacyExceptionFilter } from './legacy-exception.filter.js';
import { ref } from './openapi.js';

const errors = [
  ApiBadRequestResponse({ description: 'Malformed body or query string; problems by field', schema: ref('Error') }),
  ApiUnauthorizedResponse({ description: 'Invalid, expired or revoked credentials: {"message":"401 Unauthorized"}', schema: ref('Error') }),
  ApiForbiddenResponse({ description: 'Missing scope (insufficient_scope) or role', schema: ref('Error') }),
  ApiNotFoundResponse({ description: 'No such resource, or not visible to the caller', schema: ref('Error') }),
  ApiTooManyRequestsResponse({
    description:
      "Rate limit spent (the token's budget, or the address's when anonymous): wait Retry-After seconds. " +
      'Every response carries X-RateLimit-Limit, -Remaining, -Used and -Reset.',
    headers: { 'Retry-After': { description: 'Seconds until the budget is whole again', schema: { type: 'integer' } } },
    schema: ref('Error'),
  }),
];

/** A read: anonymous callers get public data (unless `signedIn`); tokens need `api` or `read_api`. */
export const LegacyRead = (summary: string, graphql: string, { signedIn = false } = {}) =>
  applyDecorators(
    ...(signedIn ? [] : [Public(), ApiSecurity({})]),
    RequireScopes('api', 'read_api'),
    UseFilters(LegacyExceptionFilter),
    ApiOperation({ summary, description: `Deprecated. GraphQL: \`${graphql}\``, deprecated: true }),
    ApiSecurity('PrivateToken'),
    ApiSecurity('Bearer'),
    ...errors,
  );

/** A write: a token with the `api` scope. */
export const LegacyWrite = (summary: string, graphql: string) =>
  applyDecorators(
    RequireScopes('api'),
    UseFilters(LegacyExceptionFilter),
    ApiOperation({ summary, description: `Deprecated. GraphQL: \`${graphql}\``, deprecated: true }),
    ApiSecurity('PrivateToken'),
    ApiSecurity('Bearer'),
    ...errors,
  );

/** `page` and `per_page`, answered with `X-Total`, `X-Total-Pages`, `X-Next-Page`, `X-Prev-Page` and `Link`. */
export const Paged = () =>
  applyDecorators(
    ApiQuery({ name: 'page', required: false, schema: { type: 'integer', minimum: 1, default: 1 } }),
    ApiQuery({ name: 'per_page', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } }),
  );
