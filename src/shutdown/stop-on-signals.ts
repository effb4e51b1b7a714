import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/config.schema.js';
import type { DatabaseTarget } from '../database/database-target.js';
import { JobQueue } from '../jobs/job-queue.js';
import { HttpDrain } from './http-drain.js';
import { shutdownPhases } from './shutdown-phases.js';

/**
 * On SIGTERM or SIGINT: drain HTTP (HttpDrain), then close the application (Nest's hooks, the
 * connection pool) and the database target, and exit 0; 1 when requests were cut or the bound
 * (SHUTDOWN_TIMEOUT_SECONDS) ran out. Further signals change nothing: a terminal's Ctrl-C reaches
 * both `npm start` and the server, and npm forwards it as well.
 */
export function stopOnSignals(
  app: NestFastifyApplication,
  target: DatabaseTarget,
  config: AppConfig,
  logger: Logger,
  options: {
    /** Runs after the database has closed, before exit (the buffered spans are exported). */ afterClose?: () => Promise<void>;
  } = {},
): void {
  let stopping = false;
  const stop = async (signal: NodeJS.Signals): Promise<void> => {
    if (stopping) return;
    stopping = true;
    const startedAt = performance.now();
    const phases = shutdownPhases(config.shutdownTimeoutMs);
    logger.info({ signal, ...phases }, 'Shutting down: new connections refused, /readyz 503, answering what open connections send');
    setTimeout(() => {
      logger.error(`Shutdown took longer than SHUTDOWN_TIMEOUT_SECONDS (${phases.exitMs} ms); exiting`);
      process.exit(1);
    }, phases.exitMs).unref();
    try {
      // Jobs stop being taken now; those running finish while HTTP drains, or are failed to be retried.
      const [report] = await Promise.all([
        app.get(HttpDrain).drain(phases.idleGraceMs, phases.drainMs),
        app.get(JobQueue).stop(phases.drainMs),
      ]);
      if (report.connectionsCut > 0) {
        logger.error(
          report,
          `Shutdown: still running after ${phases.drainMs} ms, so cut: ${report.requestsCut} requests, ${report.connectionsCut} connections`,
        );
      } else {
        logger.info(report, 'Drained: every request received was answered');
      }
      await app.close();
      await target.close();
      await options.afterClose?.().catch((err: unknown) => logger.warn({ err }, 'Exporting the last spans failed'));
      logger.info({ shutdownMs: Math.round(performance.now() - startedAt) }, 'Stopped');
      process.exit(report.requestsCut > 0 ? 1 : 0);
    } catch (err) {
      logger.error({ err }, 'Shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}
