import { Catch, HttpException } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AuthError, sendAuthError } from '../auth/auth.errors.js';
import { clientErrorOf, isUnavailable, prepareUnavailable, statusMessage } from '../errors/generic-errors.js';
import { UnstorableTextError } from '../errors/text-input.js';
import { TransportExceptionFilter } from '../errors/transport-exception.filter.js';
import { RateLimitError } from '../rate-limits/rate-limit.js';

/** JSON-RPC 2.0 error codes the MCP endpoint answers with over HTTP (the SDK's own for the transport). */
export const JSON_RPC = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  INTERNAL_ERROR: -32603,
  /** Implementation-defined server errors (-32000 to -32099): the HTTP status says which. */
  SERVER_ERROR: -32000,
} as const;

export const METHOD_NOT_ALLOWED = 'Method not allowed: this server keeps no session and offers no stream; send requests with POST.';

/** A JSON-RPC error response for a request the server could not attribute to an id (`id: null`). */
export function jsonRpcError(code: number, message: string): { jsonrpc: '2.0'; error: { code: number; message: string }; id: null } {
  return { jsonrpc: '2.0', error: { code, message }, id: null };
}

/**
 * The MCP endpoint's HTTP errors, as JSON-RPC error objects (what MCP clients read): a request without
 * a usable token 401 and a token short of a tool's scope 403, each with the RFC 6750 challenge naming
 * `/mcp`'s protected resource metadata (RFC 9728), from which an MCP host discovers where to sign in; a
 * request over its rate limit 429 (`Retry-After`); a body that is not JSON 400; an unreachable database
 * 503 (`Retry-After`); a method other than POST 405 (`Allow: POST`). Anything else as elsewhere (a failure 500).
 * Errors of a tool itself are the tool's result (`isError`), not HTTP errors.
 */
@Catch()
export class McpExceptionFilter extends TransportExceptionFilter {
  protected answerInProtocol(error: unknown, request: FastifyRequest, reply: FastifyReply): boolean {
    if (error instanceof AuthError) {
      sendAuthError(reply, error, jsonRpcError(JSON_RPC.SERVER_ERROR, error.message));
      return true;
    }
    if (error instanceof RateLimitError) {
      void reply.status(429).send(jsonRpcError(JSON_RPC.SERVER_ERROR, error.message));
      return true;
    }
    if (error instanceof UnstorableTextError) {
      void reply.status(400).send(jsonRpcError(JSON_RPC.INVALID_REQUEST, `${error.field}: ${error.reason}`));
      return true;
    }
    const client = clientErrorOf(error);
    if (client) {
      const code = client.status === 400 ? JSON_RPC.PARSE_ERROR : JSON_RPC.INVALID_REQUEST;
      void reply.status(client.status).send(jsonRpcError(code, client.detail));
      return true;
    }
    if (error instanceof HttpException) {
      // The router's 404 for a method /mcp has no route for (PUT, PATCH): every method but POST is refused.
      if (error.getStatus() === 404)
        void reply.status(405).header('allow', 'POST').send(jsonRpcError(JSON_RPC.SERVER_ERROR, METHOD_NOT_ALLOWED));
      else void reply.status(error.getStatus()).send(jsonRpcError(JSON_RPC.SERVER_ERROR, statusMessage(error.getStatus())));
      return true;
    }
    if (isUnavailable(error)) {
      prepareUnavailable(request, reply, error);
      void reply.status(503).send(jsonRpcError(JSON_RPC.SERVER_ERROR, 'The service is unavailable: try again shortly.'));
      return true;
    }
    return false;
  }
}

export const mcpErrors = new McpExceptionFilter();
