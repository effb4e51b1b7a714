import { Controller, Delete, Get, Post, Req, Res, UseFilters } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RateLimited } from '../rate-limits/rate-limited.decorator.js';
import { JSON_RPC, jsonRpcError, mcpErrors, METHOD_NOT_ALLOWED } from './mcp-errors.js';
import { McpEndpoint } from './mcp-endpoint.js';

/**
 * `/mcp`: the Model Context Protocol endpoint (Streamable HTTP, docs/mcp.md). Not @Public: a request
 * without a usable token is answered 401 with the challenge that starts an MCP host's sign-in. Each
 * request costs one point of its caller's rate limit, as a REST request does.
 */
@Controller('mcp')
@RateLimited()
@UseFilters(mcpErrors)
export class McpController {
  constructor(private readonly endpoint: McpEndpoint) {}

  @Post()
  post(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.endpoint.answer(request, reply);
  }

  /**
   * The server keeps no session and sends nothing unasked, so it offers no stream to GET and nothing to
   * DELETE: 405, which the Streamable HTTP transport lets a client expect (the SDK's client then goes on
   * with POST alone).
   */
  @Get()
  get(@Res() reply: FastifyReply): void {
    notAllowed(reply);
  }

  @Delete()
  delete(@Res() reply: FastifyReply): void {
    notAllowed(reply);
  }
}

function notAllowed(reply: FastifyReply): void {
  void reply.status(405).header('allow', 'POST').send(jsonRpcError(JSON_RPC.SERVER_ERROR, METHOD_NOT_ALLOWED));
}
