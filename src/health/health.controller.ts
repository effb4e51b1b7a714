import { Controller, Get, Res } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { FastifyReply } from 'fastify';
import { DataSource } from 'typeorm';
import { CredentialChangeListener } from '../auth/credential-change.listener.js';
import { IgnoresCredentials } from '../auth/public.decorator.js';
import { HttpDrain } from '../shutdown/http-drain.js';
import { MigrationReadiness } from './migration-readiness.js';
import { PoolLiveness } from './pool-liveness.js';
import { READINESS_TIMEOUT_MS, withinBound } from './probe-bounds.js';

@Controller()
@IgnoresCredentials()
export class HealthController {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly drain: HttpDrain,
    private readonly liveness: PoolLiveness,
    private readonly migrations: MigrationReadiness,
    private readonly credentialListener: CredentialChangeListener,
  ) {}

  /**
   * Liveness: the process answers, and can still reach a working state by itself (PoolLiveness: 503
   * only when the pool is wedged while the database answers a new connection; never for an outage).
   */
  @Get('healthz')
  live(@Res({ passthrough: true }) reply: FastifyReply): { status: string; stalledSeconds?: number } {
    // A failing liveness probe during the drain would get the process killed in the middle of it.
    const state = this.drain.draining ? ({ live: true } as const) : this.liveness.check();
    if (state.live) return { status: 'ok' };
    void reply.status(503);
    return { status: 'wedged', stalledSeconds: Math.round(state.stalledMs / 1000) };
  }

  /**
   * Readiness: the database answers too and has every migration of this code (with MIGRATIONS_RUN=false
   * another process applies them), the credential-change listener listens (or lost its connection less
   * than LISTENER_READINESS_GRACE_MS ago), and the server is not shutting down (a load balancer stops sending).
   */
  @Get('readyz')
  async ready(
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<{ status: string; database?: string; migrations?: string; credentialListener?: string }> {
    if (this.drain.draining) {
      void reply.status(503);
      return { status: 'draining' };
    }
    if (!(await withinBound(this.dataSource.query('SELECT 1'), READINESS_TIMEOUT_MS))) {
      void reply.status(503);
      return { status: 'unavailable', database: 'unreachable' };
    }
    let migrated = false;
    const answered = await withinBound(
      this.migrations.migrated().then((m) => (migrated = m)),
      READINESS_TIMEOUT_MS,
    );
    if (!answered) {
      void reply.status(503);
      return { status: 'unavailable', database: 'unreachable' };
    }
    if (!migrated) {
      void reply.status(503);
      return { status: 'unavailable', database: 'ok', migrations: 'pending' };
    }
    if (!this.credentialListener.ready()) {
      void reply.status(503);
      return { status: 'unavailable', database: 'ok', credentialListener: 'not listening' };
    }
    return { status: 'ok', database: 'ok' };
  }
}
