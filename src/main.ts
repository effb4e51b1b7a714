import 'reflect-metadata';
import cluster from 'node:cluster';
import { ConfigError, loadConfig } from './config/config.schema.js';
import { readEnvironment } from './config/environment.js';
import { resolveSecretKey } from './config/secret-key.js';

async function main(): Promise<void> {
  let config;
  let generatedKey: string | undefined;
  try {
    ({ config, generated: generatedKey } = resolveSecretKey(loadConfig(readEnvironment())));
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`agora: ${err.message}\nSee .env.example and docs/configuration.md.`);
      process.exit(1);
    }
    throw err;
  }
  // WORKERS > 1: this process only supervises; each worker it forks runs main() again and takes the
  // single-process path below (cluster.isWorker), the same as WORKERS=1.
  if (config.workers > 1 && cluster.isPrimary) {
    const { createLogger } = await import('./logging/logger.js');
    const { runPrimary } = await import('./cluster/cluster-primary.js');
    return runPrimary(config, createLogger(config));
  }
  // Tracing patches http, pg and graphql as they load, so it starts before the application is imported
  // (everything below is imported dynamically, after it).
  const tracing = config.tracing ? (await import('./telemetry/tracing.js')).startTracing(config.tracing) : undefined;

  const { createLogger } = await import('./logging/logger.js');
  const { openDatabaseTarget } = await import('./database/database-target.js');
  const { DatabaseSettingError, pendingMigrationsWarning, prepareDatabase } = await import('./database/prepare-database.js');
  const { createApp } = await import('./app.factory.js');
  const { MetricsListener } = await import('./metrics/metrics-listener.js');
  const { stopOnSignals } = await import('./shutdown/stop-on-signals.js');

  const logger = createLogger(config);
  if (generatedKey) logger.warn(`SECRET_KEY is not set: using the key generated in ${generatedKey} (set SECRET_KEY in production)`);
  if (tracing) logger.info({ endpoint: config.tracing!.endpoint }, 'Tracing: exporting spans over OTLP/HTTP');

  let target;
  try {
    target = await openDatabaseTarget(config);
    // A worker's primary has checked the connections and applied the migrations before forking it.
    const { applied, pending, warnings } = await prepareDatabase(config, target, {
      migrate: config.database.migrationsRun && !cluster.isWorker,
      checkPooling: !cluster.isWorker,
    });
    logger.info({ database: target.description, migrationsApplied: applied }, 'Database ready');
    for (const warning of warnings) logger.warn(warning);
    if (pending > 0 && !cluster.isWorker) logger.warn(pendingMigrationsWarning(pending));
  } catch (err) {
    // A database setting to fix (no schema, a pooler other than configured) is no crash: one line, no stack trace.
    if (err instanceof DatabaseSettingError) logger.fatal(`Cannot start: ${err.message}`);
    else logger.fatal({ err }, `Cannot start: ${(err as Error).message}`);
    await target?.close().catch(() => undefined);
    await tracing?.shutdown().catch(() => undefined);
    process.exit(1);
  }

  const app = await createApp(config, target, logger);
  await app.listen({ port: config.port, host: config.host });
  logger.info({ url: config.baseUrl, host: config.host, port: config.port }, `Agora is listening; GraphQL at ${config.baseUrl}/graphql`);
  const metricsAddress = await app.get(MetricsListener).listen();
  if (metricsAddress) logger.info({ host: config.metrics.host, port: metricsAddress.port }, 'Metrics listener: /metrics only');

  stopOnSignals(app, target, config, logger, { afterClose: tracing?.shutdown });
}

main().catch((err: unknown) => {
  console.error('agora: failed to start:', err);
  process.exit(1);
});
