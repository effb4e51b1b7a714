import { Controller, Get, HttpCode, Res } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { FastifyReply } from 'fastify';
import { DataSource } from 'typeorm';
import { IgnoresCredentials } from '../auth/public.decorator.js';
import { HttpDrain } from '../shutdown/http-drain.js';

@Controller()
@IgnoresCredentials()
export class HealthController {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly drain: HttpDrain,
  ) {}

  /** Liveness: the process answers. */
  @Get('healthz')
  @HttpCode(200)
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /** Readiness: the database answers too, and the server is not shutting down (a load balancer stops sending). */
  @Get('readyz')
  async ready(@Res({ passthrough: true }) reply: FastifyReply): Promise<{ status: string; database?: string }> {
    if (this.drain.draining) {
      void reply.status(503);
      return { status: 'draining' };
    }
    try {
      await this.dataSource.query('SELECT 1');
      return { status: 'ok', database: 'ok' };
    } catch {
      void reply.status(503);
      return { status: 'unavailable', database: 'unreachable' };
    }
  }
}
