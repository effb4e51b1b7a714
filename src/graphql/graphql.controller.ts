import { ApolloServer, HeaderMap, HTTPGraphQLRequest, HTTPGraphQLResponse } from '@apollo/server';
import { Controller, Get, Post, Req, Res, UseFilters } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import { AcceptsSessionCredential, Public } from '../auth/public.decorator.js';
import { RateLimited } from '../rate-limits/rate-limited.decorator.js';
import { RateLimits } from '../rate-limits/rate-limits.service.js';
import { ApolloServerHost } from './agora-apollo.driver.js';
import { GraphqlContext } from './graphql-context.js';
import { logQueryLimit } from './graphql-errors.js';
import { graphqlErrors } from './graphql-exception.filter.js';
import { checkDocumentLimits } from './query-limits.js';

/**
 * `/graphql`. Anonymous requests are let through here (@Public): which operations they may run is
 * decided per operation by OperationPolicyPlugin, whose refusals are answered over HTTP with the
 * contract's 401/403 bodies instead of a GraphQL error envelope. What is refused before Apollo runs is
 * answered by GraphqlExceptionFilter, as is a request over its rate limit (429).
 */
@Controller('graphql')
@Public()
@RateLimited('operation')
@UseFilters(graphqlErrors)
export class GraphqlController {
  constructor(
    private readonly apollo: ApolloServerHost,
    private readonly rateLimits: RateLimits,
  ) {}

  /** The API explorer's calls come here with the session cookie and the page's CSRF token. */
  @Post()
  @AcceptsSessionCredential()
  post(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.execute(req, reply);
  }

  @Get()
  async get(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    // A browser opening the endpoint (no query, wants HTML) is shown the explorer.
    if (!req.url.includes('?') && (req.headers.accept ?? '').startsWith('text/html')) {
      await reply.redirect('/explorer', 302);
      return;
    }
    return this.execute(req, reply);
  }

  private execute(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    return answerGraphql(this.apollo.server!, this.rateLimits, req, reply);
  }
}

/**
 * One GraphQL request over HTTP, as GraphqlController answers it (exported for bench/layers.ts, which
 * runs it behind each of the request hooks in turn).
 */
export async function answerGraphql(
  apollo: ApolloServer<GraphqlContext>,
  rateLimits: RateLimits,
  req: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  const budget = rateLimits.enabled ? rateLimits.budgetOf(req, reply) : undefined;
  const context: GraphqlContext = { req, principal: req.principal ?? null, policy: {}, budget, scope: new Map() };
  const request = toApolloRequest(req);
  const response = await apollo.executeHTTPGraphQLRequest({
    httpGraphQLRequest: request,
    // Apollo asks for the context before it parses the document, and answers a GraphQLError thrown
    // here with its status (400) in the negotiated media type: a document beyond the token or
    // nesting limit is refused before the parser (which recurses once per bracket) sees it.
    context: async () => {
      const query = queryOf(request);
      const refusal = query === undefined ? undefined : checkDocumentLimits(query);
      if (refusal) {
        logQueryLimit(req, refusal);
        throw refusal;
      }
      return context;
    },
  });
  if (budget) {
    // An operation that was analysed has been charged its cost; a request that ended before (a
    // document that does not parse, an operation refused for its credentials) costs 1 point.
    const pending = budget.charge(1);
    if (pending) await pending;
    if (budget.refusal) throw budget.refusal;
  }
  if (context.policy.denial) throw context.policy.denial;

  reply.status(statusFor(response));
  for (const [name, value] of response.headers) reply.header(name, value);
  // An answer to a caller with credentials may carry what only that caller may read: no cache, shared
  // or the browser's, keeps it. Anonymous answers hold public data and carry no directive (Apollo's
  // cache-control plugin is off), so no cache stores them either without a validator or a lifetime.
  if (context.principal) reply.header('cache-control', 'private, no-store');
  if (response.body.kind === 'complete') {
    await reply.send(response.body.string);
  } else {
    await reply.send(Readable.from(response.body.asyncIterator));
  }
}

// Failures of the GraphQL request itself (its document or its variables), as Apollo codes them. Limits
// (QUERY_TOO_*, formatGraphqlError gives graphql-js's own validation limits theirs) are not among them:
// they keep their 400 whatever the media type.
const REQUEST_PHASE_CODES = new Set(['GRAPHQL_PARSE_FAILED', 'GRAPHQL_VALIDATION_FAILED', 'BAD_USER_INPUT']);

/**
 * GraphQL-over-HTTP: with `application/json` (legacy) responses, a well-formed request whose document
 * fails to parse or validate, or whose variables do not coerce, SHOULD still be answered 200 — clients of
 * that media type read the errors from the body. `application/graphql-response+json` keeps Apollo's 400.
 */
function statusFor(response: HTTPGraphQLResponse): number {
  const status = response.status ?? 200;
  if (status !== 400 || response.body.kind !== 'complete' || !response.headers.get('content-type')?.startsWith('application/json'))
    return status;
  try {
    const { errors, data } = JSON.parse(response.body.string) as { errors?: { extensions?: { code?: string } }[]; data?: unknown };
    const requestPhase = data === undefined && !!errors?.length && errors.every((e) => REQUEST_PHASE_CODES.has(e.extensions?.code ?? ''));
    return requestPhase ? 200 : status;
  } catch {
    return status;
  }
}

/** The document of a request, where Apollo will read it from; anything else is Apollo's to refuse. */
function queryOf(request: HTTPGraphQLRequest): string | undefined {
  const query =
    request.method === 'GET' ? new URLSearchParams(request.search).get('query') : (request.body as { query?: unknown } | null)?.query;
  return typeof query === 'string' ? query : undefined;
}

function toApolloRequest(req: FastifyRequest): HTTPGraphQLRequest {
  const headers = new HeaderMap();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  const queryStart = req.url.indexOf('?');
  return {
    method: req.method.toUpperCase(),
    headers,
    search: queryStart === -1 ? '' : req.url.slice(queryStart),
    body: req.body,
  };
}
