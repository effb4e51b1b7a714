import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AuthError } from '../auth/auth.errors.js';
import type { Principal } from '../auth/principal.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { DomainError, failuresOf } from '../errors/domain-error.js';
import { UnstorableTextError } from '../errors/text-input.js';
import { EventsReaderFactory } from '../events/events.reader.js';
import { EventsService } from '../events/events.service.js';
import { RegistrationsService } from '../events/registrations.service.js';
import { TicketTypesService } from '../events/ticket-types.service.js';
import { Metrics } from '../metrics/metrics.js';
import { MCP_TOOLS, mayUse, McpTool, ToolContext } from './mcp-tools.js';

const TOOLS_BY_NAME = new Map(MCP_TOOLS.map((tool) => [tool.name, tool]));

const INSTRUCTIONS =
  'Agora is an events platform. Use find_events to look for events and get_event for one event and its ticket types; ' +
  'register_for_event and cancel_registration act for the signed-in user, my_registrations lists theirs. ' +
  "An organizer's team can list an event's registrations (event_registrations) and check attendees in (check_in_attendee). " +
  'Times are ISO 8601 in UTC; ids are uuids.';

/**
 * The MCP server (Streamable HTTP, stateless): every POST to /mcp is answered by a server of its own,
 * built for the request's caller, with the official SDK's server and its web-standard transport answering
 * in JSON (no SSE stream, no session: any instance answers any request, as /graphql does). AuthGuard has
 * authenticated the caller and charged the request to its rate limit before this runs.
 *
 * A token lists and calls the tools its scopes allow (`read_api` the reads, `api` everything); calling a
 * tool beyond them is refused over HTTP, 403 `insufficient_scope` naming the scope, so that an MCP host can
 * ask the user for more (MCP's step-up authorization). What a tool may see and do is the events services'
 * decision, as for GraphQL and REST; their refusals (not found, forbidden) are the tool's result with
 * `isError`, which the model reads. An unreachable database fails the request (503), never a tool result.
 */
@Injectable()
export class McpEndpoint {
  constructor(
    private readonly readers: EventsReaderFactory,
    private readonly events: EventsService,
    private readonly registrations: RegistrationsService,
    private readonly ticketTypes: TicketTypesService,
    private readonly metrics: Metrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async answer(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const principal = request.principal!;
    const invalid = Array.isArray(request.body) ? undefined : invalidToolCall(request.body);
    if (invalid) {
      // The SDK would answer these with its internal error (-32603) and zod's text: they are the caller's
      // mistake. A notification (no id) is answered by no message (Streamable HTTP: 202, no body).
      void reply.header('cache-control', 'private, no-store');
      if (invalid.id === undefined) return void (await reply.status(202).send());
      await reply
        .status(200)
        .send({ jsonrpc: '2.0', id: invalid.id, error: { code: -32602, message: `Invalid params: ${invalid.problem}` } });
      return;
    }
    for (const message of Array.isArray(request.body) ? request.body : [request.body]) {
      const tool = calledTool(message);
      if (tool && !mayUse(tool, principal.scopes)) throw AuthError.insufficientScope(tool.scopes);
    }
    const failure: { error?: unknown } = {};
    const server = this.serverFor(principal, failure);
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      const response = await transport.handleRequest(this.webRequest(request), { parsedBody: request.body });
      if (failure.error !== undefined) throw failure.error;
      void reply.status(response.status);
      response.headers.forEach((value, name) => void reply.header(name, value));
      // What a tool answers is the caller's: no cache keeps it.
      void reply.header('cache-control', 'private, no-store');
      const body = await response.text();
      await reply.send(body === '' ? undefined : body);
    } finally {
      await server.close();
    }
  }

  /** The request as the SDK's web-standard transport reads it (the body is passed already parsed). */
  private webRequest(request: FastifyRequest): Request {
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) {
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    return new Request(`${this.config.baseUrl}${request.url}`, { method: request.method, headers });
  }

  private serverFor(principal: Principal, failure: { error?: unknown }): McpServer {
    const server = new McpServer(
      { name: 'agora', title: 'Agora', version: '1.0.0', websiteUrl: this.config.baseUrl },
      { capabilities: { tools: {} }, instructions: INSTRUCTIONS },
    );
    const context: ToolContext = {
      principal,
      reader: this.readers.forPrincipal(principal),
      events: this.events,
      registrations: this.registrations,
      ticketTypes: this.ticketTypes,
    };
    for (const tool of MCP_TOOLS) {
      if (!mayUse(tool, principal.scopes)) continue;
      server.registerTool(
        tool.name,
        {
          title: tool.title,
          description: tool.description,
          inputSchema: tool.input,
          outputSchema: tool.output,
          annotations: { title: tool.title, readOnlyHint: tool.readOnly, destructiveHint: false, openWorldHint: false },
        },
        (args: Record<string, unknown>) => this.call(tool, context, args, failure),
      );
    }
    return server;
  }

  private async call(
    tool: McpTool,
    context: ToolContext,
    args: Record<string, unknown>,
    failure: { error?: unknown },
  ): Promise<CallToolResult> {
    // Durations are measured, not decided: the monotonic clock, as the HTTP metrics use.
    const started = performance.now();
    try {
      const result = await tool.run(context, args);
      this.metrics.mcpToolCall(tool.name, 'ok', (performance.now() - started) / 1000);
      return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result };
    } catch (error) {
      const refusal = refusalOf(error);
      this.metrics.mcpToolCall(tool.name, refusal ? 'refused' : 'failed', (performance.now() - started) / 1000);
      if (refusal) return { content: [{ type: 'text', text: refusal }], isError: true };
      failure.error = error;
      throw error;
    }
  }
}

/** The tool a JSON-RPC message calls, if it is a `tools/call` of a known tool. */
function calledTool(message: unknown): McpTool | undefined {
  if (typeof message !== 'object' || message === null) return undefined;
  const { method, params } = message as { method?: unknown; params?: { name?: unknown } };
  if (method !== 'tools/call' || typeof params?.name !== 'string') return undefined;
  return TOOLS_BY_NAME.get(params.name);
}

/**
 * A `tools/call` whose parameters are not what MCP defines (an object with the tool's `name`, a string,
 * and its `arguments`, if given, an object): what is wrong, and the request's id to answer.
 */
function invalidToolCall(message: unknown): { id: string | number | undefined; problem: string } | undefined {
  if (typeof message !== 'object' || message === null) return undefined;
  const { jsonrpc, method, id, params } = message as { jsonrpc?: unknown; method?: unknown; id?: unknown; params?: unknown };
  // Anything else that is not a well-formed request (another version, an id that is neither string nor
  // number) is left to the SDK, which answers it as an invalid request.
  if (jsonrpc !== '2.0' || method !== 'tools/call' || (id !== undefined && typeof id !== 'string' && typeof id !== 'number'))
    return undefined;
  const answerTo = id as string | number | undefined;
  if (typeof params !== 'object' || params === null || Array.isArray(params))
    return { id: answerTo, problem: 'params must be an object with the tool’s name and its arguments' };
  const { name, arguments: args } = params as { name?: unknown; arguments?: unknown };
  if (typeof name !== 'string') return { id: answerTo, problem: 'params.name must be the tool’s name, a string' };
  if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args)))
    return { id: answerTo, problem: 'params.arguments must be an object of the tool’s arguments by name' };
  return undefined;
}

/** What a tool tells the model when the services refuse: the error's code and message, and each field's problem. */
function refusalOf(error: unknown): string | undefined {
  if (error instanceof UnstorableTextError) return `INVALID_INPUT: ${error.field}: ${error.reason}`;
  if (!(error instanceof DomainError)) return undefined;
  const fields = failuresOf(error)
    .filter((f) => f.field)
    .map((f) => `${f.field}: ${f.message}`);
  return [`${error.code}: ${error.message}`, ...(fields.length > 1 ? fields : [])].join('\n');
}
