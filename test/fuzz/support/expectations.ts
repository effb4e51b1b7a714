import type { TestApp } from '../../support/test-app.js';
import { Answer, describeAnswer } from './raw-http.js';

/**
 * What every answer to bad input must be, per transport: never a 5xx, and the error shape that
 * transport's clients parse. A failure names the request and the answer, and fast-check adds the
 * generated input, the seed and the path that replay it.
 */

class ShapeError extends Error {
  constructor(surface: string, problem: string, request: string, answer: Answer) {
    super(`${surface}: ${problem}\n  request: ${request.slice(0, 800)}\n  answer:  ${describeAnswer(answer)}`);
    this.name = 'ShapeError';
  }
}

/**
 * With FUZZ_STATS=1, how often each kind of answer came back (status and error code per surface),
 * printed after each file: the way to see whether generated input gets past the first check.
 */
const tally = new Map<string, number>();

function count(surface: string, answer: Answer, detail: unknown): void {
  if (!process.env.FUZZ_STATS) return;
  const key = `${surface} ${answer.status} ${detail === undefined ? '' : String(detail).slice(0, 60)}`;
  tally.set(key, (tally.get(key) ?? 0) + 1);
}

/** For the tally: each mutation payload's outcome, its first userErrors code or `ok`. */
function payloads(data: unknown): string {
  if (!isRecord(data)) return 'data';
  const outcomes = Object.entries(data)
    .filter(([, payload]) => isRecord(payload) && Array.isArray(payload.userErrors))
    .map(([field, payload]) => {
      const [problem] = (payload as { userErrors: { code?: string }[] }).userErrors;
      return `${field}:${problem ? String(problem.code) : 'ok'}`;
    });
  return outcomes.length ? outcomes.join(' ') : 'data';
}

export function printTally(): void {
  if (!process.env.FUZZ_STATS) return;
  console.log(
    [...tally]
      .sort((a, b) => b[1] - a[1])
      .map(([key, n]) => `${String(n).padStart(6)}  ${key}`)
      .join('\n'),
  );
}

function check(condition: unknown, surface: string, problem: string, request: string, answer: Answer): asserts condition {
  if (!condition) throw new ShapeError(surface, problem, request, answer);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

const UNAUTHORIZED = '{"message":"401 Unauthorized"}';
const INSUFFICIENT_SCOPE = '{"message":"403 Forbidden","error":"insufficient_scope"}';

/**
 * The HTTP parser's own refusals (a NUL or a bare CR in a header, a space in the target, an unknown
 * method, headers over 16 KB): answered before a request exists (src/web/parser-refusals.ts), in the
 * shape of the transport the request line names, with 431 or 408 beside the 400s every surface has.
 */
const PARSER_STATUSES = new Set([400, 408, 431]);

/**
 * The security headers and a request id: on every answer, the parser's refusals and the router's
 * included (helmet's policy, src/web/security-headers.ts; only their presence is checked here).
 */
const HOUSE_HEADERS = [
  'content-security-policy',
  'x-content-type-options',
  'x-frame-options',
  'referrer-policy',
  'cross-origin-opener-policy',
  'x-request-id',
];

export function expectHouseHeaders(surface: string, request: string, answer: Answer): void {
  for (const name of HOUSE_HEADERS) check(answer.headers[name], surface, `every answer needs ${name}`, request, answer);
}

/** The contract's exact 401 and 403 bodies and their RFC 6750 challenges (GraphQL, REST, userinfo). */
function checkAuthFailure(surface: string, request: string, answer: Answer): void {
  const challenge = answer.headers['www-authenticate'] ?? '';
  if (answer.status === 401) {
    check(answer.text === UNAUTHORIZED, surface, 'a 401 must have the contract body', request, answer);
    // RFC 6750 §3, and where a client finds out how to get a token (RFC 9728 §5.1).
    check(
      /^Bearer (error="invalid_token", )?(scope="api offline_access", )?resource_metadata="https?:\/\/[^"]+\/\.well-known\/oauth-protected-resource(\/graphql)?"$/.test(
        challenge,
      ),
      surface,
      'a 401 must carry a Bearer challenge',
      request,
      answer,
    );
  } else {
    check(answer.text === INSUFFICIENT_SCOPE, surface, 'a 403 must be insufficient_scope', request, answer);
    check(challenge.startsWith('Bearer error="insufficient_scope"'), surface, 'a 403 must carry the scope challenge', request, answer);
  }
}

/** `extensions.code` values a client can get from /graphql: the table in docs/graphql-over-http.md. */
const GRAPHQL_CODES = new Set([
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_USER_INPUT',
  'BAD_REQUEST',
  'OPERATION_RESOLUTION_FAILURE',
  'PERSISTED_QUERY_NOT_SUPPORTED',
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'NOT_FOUND',
  'CONFLICT',
  'QUERY_TOO_LARGE',
  'QUERY_TOO_DEEP',
  'QUERY_TOO_COMPLEX',
]);

// 406: an Accept header that takes neither JSON type (GraphQL-over-HTTP lets the server refuse it).
const GRAPHQL_STATUSES = new Set([200, 400, 401, 403, 405, 406, 413, 415]);

export function expectGraphqlAnswer(request: string, answer: Answer): void {
  const surface = 'GraphQL';
  const first = isRecord(answer.json) && Array.isArray(answer.json.errors) ? answer.json.errors[0] : undefined;
  const extensions = isRecord(first) && isRecord(first.extensions) ? first.extensions : {};
  count(
    surface,
    answer,
    first
      ? `${String(extensions.code)} ${String(extensions.reason ?? '')} ${String(first.message)
          .replace(/"[^"]*"/g, '…')
          .slice(0, 60)}`
      : isRecord(answer.json)
        ? payloads(answer.json.data)
        : '',
  );
  check(answer.status < 500, surface, 'a 5xx', request, answer);
  expectHouseHeaders(surface, request, answer);
  check(
    GRAPHQL_STATUSES.has(answer.status) || PARSER_STATUSES.has(answer.status),
    surface,
    `status ${answer.status} is not one GraphQL-over-HTTP allows here`,
    request,
    answer,
  );
  if (answer.status === 401 || answer.status === 403) return checkAuthFailure(surface, request, answer);
  const type = answer.headers['content-type'] ?? '';
  check(/^application\/(graphql-response\+)?json\b/.test(type), surface, 'a GraphQL answer must be JSON', request, answer);
  const body = answer.json;
  check(isRecord(body), surface, 'the body must be a JSON object', request, answer);
  const errors = body.errors;
  if (answer.status !== 200) check(Array.isArray(errors) && errors.length > 0, surface, 'an error status needs errors[]', request, answer);
  check(errors !== undefined || 'data' in body, surface, 'the body needs data or errors', request, answer);
  if (errors === undefined) return;
  check(Array.isArray(errors) && errors.length > 0, surface, 'errors must be a non-empty array', request, answer);
  for (const error of errors) {
    check(isRecord(error) && typeof error.message === 'string', surface, 'each error needs a message', request, answer);
    const code = isRecord(error.extensions) ? error.extensions.code : undefined;
    check(
      typeof code === 'string' && GRAPHQL_CODES.has(code),
      surface,
      `extensions.code ${String(code)} is not a documented code`,
      request,
      answer,
    );
  }
}

/** RFC 6749 §5.2 error codes the client endpoints (token, revoke, introspect) answer. */
const OAUTH_CODES = new Set([
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_scope',
]);

/** /oauth/token, /oauth/revoke, /oauth/introspect: 200, or RFC 6749 `{error, error_description?}` with 400/401. */
export function expectOAuthClientAnswer(request: string, answer: Answer): void {
  const surface = 'OAuth';
  count(surface, answer, isRecord(answer.json) ? `${String(answer.json.error)} ${String(answer.json.error_description).slice(0, 40)}` : '');
  check(answer.status < 500, surface, 'a 5xx', request, answer);
  expectHouseHeaders(surface, request, answer);
  check(/^application\/json\b/.test(answer.headers['content-type'] ?? ''), surface, 'an OAuth answer must be JSON', request, answer);
  check(/no-store/.test(answer.headers['cache-control'] ?? ''), surface, 'an OAuth answer must not be stored', request, answer);
  const body = answer.json;
  check(isRecord(body), surface, 'the body must be a JSON object', request, answer);
  if (answer.status === 200) return;
  check(
    answer.status === 400 || answer.status === 401 || PARSER_STATUSES.has(answer.status),
    surface,
    `status ${answer.status}: RFC 6749 errors are 400 or 401 (408 or 431 from the HTTP parser)`,
    request,
    answer,
  );
  check(
    typeof body.error === 'string' && OAUTH_CODES.has(body.error),
    surface,
    `error ${String(body.error)} is not an RFC 6749 code`,
    request,
    answer,
  );
  check(
    body.error_description === undefined || typeof body.error_description === 'string',
    surface,
    'error_description must be text',
    request,
    answer,
  );
  check(
    Object.keys(body).every((k) => k === 'error' || k === 'error_description'),
    surface,
    'an error body has no other fields',
    request,
    answer,
  );
  if (answer.status === 401) {
    check(body.error === 'invalid_client', surface, 'only invalid_client is a 401', request, answer);
    check(/^Basic /.test(answer.headers['www-authenticate'] ?? ''), surface, 'invalid_client needs a Basic challenge', request, answer);
  }
}

/** /oauth/userinfo: the claims, or the contract's 401/403 with a Bearer challenge (RFC 6750). */
export function expectUserinfoAnswer(request: string, answer: Answer): void {
  const surface = 'UserInfo';
  count(surface, answer, answer.headers['www-authenticate']);
  check(answer.status < 500, surface, 'a 5xx', request, answer);
  expectHouseHeaders(surface, request, answer);
  if (PARSER_STATUSES.has(answer.status)) return expectRestAnswer(request, answer);
  if (answer.status === 401 || answer.status === 403) return checkAuthFailure(surface, request, answer);
  check(answer.status === 200, surface, `status ${answer.status}`, request, answer);
  check(isRecord(answer.json) && typeof answer.json.sub === 'string', surface, 'claims need sub', request, answer);
}

/** Any answer: not a 5xx (a HEAD, whose answer has no body to check). */
const JSON_RPC_STATUSES = new Set([200, 202, 400, 401, 403, 404, 405, 406, 413, 415, 429]);

function isJsonRpcResponse(value: unknown): boolean {
  if (!isRecord(value) || value.jsonrpc !== '2.0' || !('id' in value)) return false;
  if ('result' in value) return isRecord(value.result);
  return isRecord(value.error) && typeof value.error.code === 'number' && typeof value.error.message === 'string';
}

/**
 * The MCP endpoint (/mcp): JSON-RPC responses (one, or a list for a batch), 202 with no body for
 * notifications only, or an HTTP error whose body is a JSON-RPC error (`id: null`); 401 and 403 with the
 * challenge naming /mcp's metadata. A tool's own error is a result with `isError` and never a stack.
 */
export function expectMcpAnswer(request: string, answer: Answer): void {
  const surface = 'MCP';
  const body = answer.json;
  const error = isRecord(body) && isRecord(body.error) ? body.error : undefined;
  const result = isRecord(body) && isRecord(body.result) ? body.result : undefined;
  count(surface, answer, error ? error.code : result?.isError ? 'isError' : 'result');
  check(answer.status < 500, surface, 'a 5xx', request, answer);
  expectHouseHeaders(surface, request, answer);
  check(JSON_RPC_STATUSES.has(answer.status), surface, `status ${answer.status}`, request, answer);
  if (answer.status === 202) return check(answer.text === '', surface, 'a 202 has no body', request, answer);
  if (answer.status === 405) check(answer.headers.allow !== undefined, surface, 'a 405 needs Allow', request, answer);
  if (answer.status === 401 || answer.status === 403) {
    check(
      /resource_metadata="https?:\/\/[^"]+\/\.well-known\/oauth-protected-resource\/mcp"$/.test(answer.headers['www-authenticate'] ?? ''),
      surface,
      'a 401 or 403 must carry the challenge for /mcp',
      request,
      answer,
    );
  }
  check(/^application\/json\b/.test(answer.headers['content-type'] ?? ''), surface, 'an answer must be JSON', request, answer);
  const responses = Array.isArray(body) ? body : [body];
  check(responses.length > 0 && responses.every(isJsonRpcResponse), surface, 'the body must be JSON-RPC responses', request, answer);
  if (answer.status !== 200)
    check(isRecord(body) && body.id === null && isRecord(body.error), surface, 'an HTTP error is a JSON-RPC error', request, answer);
  check(!/\n\s+at [^\n]+:\d+:\d+/.test(answer.text), surface, 'no stack trace reaches the client', request, answer);
}

export function expectNoServerError(surface: string, request: string, answer: Answer): void {
  count(surface, answer, 'HEAD');
  check(answer.status < 500, surface, 'a 5xx', request, answer);
  expectHouseHeaders(surface, request, answer);
}

/** The legacy REST API: 2xx/304 JSON, or `{"message": …}` with `errors` by field, `code` or `error`. */
export function expectRestAnswer(request: string, answer: Answer): void {
  const surface = 'REST';
  count(surface, answer, isRecord(answer.json) ? (answer.json.code ?? Object.keys(answer.json.errors ?? {}).join(',')) : '');
  check(answer.status < 500, surface, 'a 5xx', request, answer);
  expectHouseHeaders(surface, request, answer);
  if (answer.status === 204 || answer.status === 304) return;
  if ((answer.status === 401 || answer.status === 403) && !answer.text.includes('"code"'))
    return checkAuthFailure(surface, request, answer);
  check(/^application\/json\b/.test(answer.headers['content-type'] ?? ''), surface, 'a REST answer must be JSON', request, answer);
  const body = answer.json;
  if (answer.status < 300) {
    check(body !== undefined, surface, 'a success needs a JSON body', request, answer);
    return;
  }
  check(answer.status >= 400, surface, `status ${answer.status}`, request, answer);
  check(isRecord(body) && typeof body.message === 'string', surface, 'an error needs a message', request, answer);
  const allowed = new Set(['message', 'errors', 'code', 'error']);
  check(
    Object.keys(body).every((k) => allowed.has(k)),
    surface,
    'an error body has only message, errors, code, error',
    request,
    answer,
  );
  if (body.errors !== undefined) {
    check(isRecord(body.errors), surface, 'errors must be an object by field', request, answer);
    for (const messages of Object.values(body.errors))
      check(
        Array.isArray(messages) && messages.every((m) => typeof m === 'string'),
        surface,
        'errors holds lists of text',
        request,
        answer,
      );
  }
  if (answer.status === 405) check(answer.headers.allow !== undefined, surface, 'a 405 needs Allow', request, answer);
}

const PAGE_STATUSES = new Set([200, 302, 303, 400, 401, 403, 404, 405, 409, 413, 414, 415, 422, 429]);

/**
 * Pages: an HTML page (the form again, or an error page), or a redirect with a Location. A client that
 * does not ask for HTML gets the APIs' JSON for an address that is no page (the fallback filter, src/errors/fallback-exception.filter.ts).
 */
export function expectPageAnswer(request: string, answer: Answer, options: { browser?: boolean } = {}): void {
  if (options.browser === false && /^application\/json\b/.test(answer.headers['content-type'] ?? ''))
    return expectRestAnswer(request, answer);
  const surface = 'Page';
  count(surface, answer, answer.headers.location?.replace(/\?.*/, '?…') ?? /<h1>([^<]*)/.exec(answer.text)?.[1]);
  check(answer.status < 500, surface, 'a 5xx', request, answer);
  expectHouseHeaders(surface, request, answer);
  // Before a request exists the edge knows a page only by the client asking for HTML: a refusal whose
  // Accept header was junk (or never read) gets the APIs' JSON.
  if (PARSER_STATUSES.has(answer.status) && /^application\/json\b/.test(answer.headers['content-type'] ?? ''))
    return expectRestAnswer(request, answer);
  check(
    PAGE_STATUSES.has(answer.status) || PARSER_STATUSES.has(answer.status),
    surface,
    `status ${answer.status} is not a page answer`,
    request,
    answer,
  );
  if (answer.status === 302 || answer.status === 303) {
    check(answer.headers.location, surface, 'a redirect needs a Location', request, answer);
    return;
  }
  check(/^text\/html\b/.test(answer.headers['content-type'] ?? ''), surface, 'a page must be HTML', request, answer);
  check(/^<!doctype html>/i.test(answer.text.trimStart()), surface, 'a page must be a whole document', request, answer);
}

/**
 * The app's own error log lines (level 50 and up: "Request failed", "Page failed", "GraphQL operation
 * failed") since a mark: an unexpected error inside a 200 (a resolver failing in a partial result)
 * counts as much as a 500.
 */
export class ErrorLog {
  private seen = 0;

  constructor(private readonly t: TestApp) {}

  mark(): void {
    this.seen = this.t.logs.length;
  }

  expectNone(request: string): void {
    const errors = this.t.logs.slice(this.seen).filter((line) => typeof line.level === 'number' && line.level >= 50);
    if (errors.length === 0) return;
    const summary = errors
      .map((line) => `${String(line.msg)}: ${JSON.stringify((line as { err?: unknown }).err ?? {}).slice(0, 500)}`)
      .join('\n    ');
    throw new Error(`the server logged errors\n  request: ${request.slice(0, 800)}\n  log:     ${summary}`);
  }
}
