import { Controller, Get, HttpCode, Res } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { FastifyReply } from 'fastify';
import { DataSource } from 'typeorm';
import { IgnoresCredentials } from '../auth/public.decorator.js';

@Controller()
@IgnoresCredentials()
export class HealthController {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Liveness: the process answers. */
  @Get('healthz')
  @HttpCode(200)
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /** Readiness: the database answers too. */
  @Get('readyz')
  async ready(@Res({ passthrough: true }) reply: FastifyReply): Promise<{ status: string; database: string }> {
    try {
      await this.dataSource.query('SELECT 1');
      return { status: 'ok', database: 'ok' };
    } catch {
      void reply.status(503);
      return { status: 'unavailable', database: 'unreachable' };
    }
  }
}
