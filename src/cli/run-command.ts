import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { coreModules } from '../app.module.js';
import { AppConfig, loadConfig } from '../config/config.schema.js';
import { projectRoot } from '../config/project-root.js';
import { resolveSecretKey } from '../config/secret-key.js';
import { openDatabaseTarget } from '../database/database-target.js';
import { prepareDatabase } from '../database/prepare-database.js';
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
    await prepareDatabase(config, target, { migrate: config.database.migrationsRun });
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
