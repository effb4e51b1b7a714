import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { coreModules } from '../core-modules.js';
import { AppConfig, loadConfig } from '../config/config.schema.js';
import { projectRoot } from '../config/project-root.js';
import { resolveSecretKey } from '../config/secret-key.js';
import { DatabaseTarget, openDatabaseTarget } from '../database/database-target.js';
import { prepareDatabase } from '../database/prepare-database.js';
import { NotMigratedError } from './cli-error.js';
import { CommandName } from './command-specs.js';
import { DATA_COMMANDS, DataCommand } from './commands.js';
import { migrationGenerate, migrationRevert, migrationRun } from './migration-commands.js';
import { Flags } from './parse-command-line.js';

/**
 * Runs a parsed command with the server's configuration; the result is printed as JSON. Loaded only
 * once a command is to run, so that help and usage errors answer without loading the application.
 */
export async function runCommand(command: CommandName, flags: Flags, env: Record<string, string | undefined>): Promise<unknown> {
  const { config } = resolveSecretKey(loadConfig(env));
  switch (command) {
    case 'migration:run':
      return migrationRun(config);
    case 'migration:revert':
      return migrationRevert(config);
    case 'migration:generate':
      return migrationGenerate(config, flags.name as string, projectRoot());
    default:
      return runDataCommand(config, DATA_COMMANDS[command], flags);
  }
}

async function runDataCommand(config: AppConfig, run: DataCommand, flags: Flags): Promise<unknown> {
  const target = await openDatabaseTarget(config, { shareRunning: true });
  try {
    await checkSchema(config, target);
    @Module({ imports: coreModules({ ...config, database: { ...config.database, poolSize: 2 } }, target, { serving: false }) })
    class CliModule {}
    const app = await NestFactory.createApplicationContext(CliModule, { logger: ['error'], abortOnError: false });
    try {
      return await run(app, flags);
    } finally {
      await app.close();
    }
  } finally {
    await target.close();
  }
}

const MIGRATE_HINT = 'run `npm run migration:run` first';

/**
 * Only `migration:run` migrates a shared database: a data command refuses one that is not at this
 * code's schema (another instance, or the migration job, may be about to migrate it, or the operator
 * chose MIGRATIONS_RUN=false). The exception is an embedded database this process opened itself (no
 * server has it open: a fresh checkout, where `npm run cli -- seed:demo` may be the first thing run):
 * there the CLI migrates as the server would at start-up, unless MIGRATIONS_RUN=false. Through a
 * running server's socket it migrates nothing: that server migrated at its start, or was told not to.
 */
async function checkSchema(config: AppConfig, target: DatabaseTarget): Promise<void> {
  // `notifications` is set only on an embedded database opened by this very process.
  const ownsEmbedded = target.kind === 'embedded' && target.notifications !== undefined;
  const { pending } = await prepareDatabase(config, target, {
    migrate: ownsEmbedded && config.database.migrationsRun,
    noSchemaHint: MIGRATE_HINT,
    // A command goes through the session connection only (DATABASE_DIRECT_URL when set): what the
    // server checks at start-up about DATABASE_URL is not its concern.
    checkPooling: false,
  });
  if (pending > 0) {
    throw new NotMigratedError(
      `The database (${target.description}) has ${pending} pending migration${pending === 1 ? '' : 's'}: ${MIGRATE_HINT}`,
    );
  }
}
