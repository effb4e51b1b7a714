import 'reflect-metadata';
import { createApp } from './app.factory.js';
import { ConfigError, loadConfig } from './config/config.schema.js';
import { readEnvironment } from './config/environment.js';
import { resolveSecretKey } from './config/secret-key.js';
import { openDatabaseTarget } from './database/database-target.js';
import { prepareDatabase } from './database/prepare-database.js';
import { createLogger } from './logging/logger.js';
import { stopOnSignals } from './shutdown/stop-on-signals.js';

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
  const logger = createLogger(config);
  if (generatedKey) logger.warn(`SECRET_KEY is not set: using the key generated in ${generatedKey} (set SECRET_KEY in production)`);

  let target;
  try {
    target = await openDatabaseTarget(config);
    const applied = await prepareDatabase(config, target, { migrate: config.database.migrationsRun });
    logger.info({ database: target.description, migrationsApplied: applied }, 'Database ready');
  } catch (err) {
    logger.fatal({ err }, `Cannot start: ${(err as Error).message}`);
    await target?.close().catch(() => undefined);
    process.exit(1);
  }

  const app = await createApp(config, target, logger);
  await app.listen({ port: config.port, host: config.host });
  logger.info({ url: config.baseUrl, host: config.host, port: config.port }, `Agora is listening; GraphQL at ${config.baseUrl}/graphql`);

  stopOnSignals(app, target, config, logger);
}

main().catch((err: unknown) => {
  console.error('agora: failed to start:', err);
  process.exit(1);
});
