import { Module, OnModuleInit } from '@nestjs/common';
import { ErrorMappers } from '../errors/error-mappers.js';
import { ErrorsModule } from '../errors/errors.module.js';
import { addressOf } from '../errors/generic-errors.js';
import { EventsModule } from '../events/events.module.js';
import { MetricsModule } from '../metrics/metrics.module.js';
import { McpController } from './mcp.controller.js';
import { McpEndpoint } from './mcp-endpoint.js';
import { mcpErrors } from './mcp-errors.js';

/** The MCP server at /mcp (docs/mcp.md): tools over the events services, behind the global guard. */
@Module({
  imports: [ErrorsModule, EventsModule, MetricsModule],
  controllers: [McpController],
  providers: [McpEndpoint],
})
export class McpModule implements OnModuleInit {
  constructor(private readonly errorMappers: ErrorMappers) {}

  /** What Fastify refuses at /mcp before McpController runs (a body that is not JSON, too large), as JSON-RPC errors. */
  onModuleInit(): void {
    this.errorMappers.register((error, request, reply) => {
      if (addressOf(request) !== '/mcp') return false;
      mcpErrors.answer(error, request, reply);
      return true;
    });
  }
}
