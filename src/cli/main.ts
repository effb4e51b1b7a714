import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { coreModules } from '../app.module.js';
import { AppConfig, ConfigError, loadConfig } from '../config/config.schema.js';
import { readEnvironment } from '../config/environment.js';
import { resolveSecretKey } from '../config/secret-key.js';
import { projectRoot } from '../config/project-root.js';
import { openDatabaseTarget } from '../database/database-target.js';
import { prepareDatabase } from '../database/prepare-database.js';
import { DomainError, failuresOf } from '../errors/domain-error.js';
import { UsageError } from './cli-error.js';
import { DATA_COMMANDS, Flags, optional } from './commands.js';
import { migrationGenerate, migrationRevert, migrationRun } from './migration-commands.js';

const STRING_FLAGS = ['username', 'email', 'name', 'password', 'user', 'scopes', 'expires-at', 'id', 'owner', 'redirect-uri', 'days'];
const FLAG_OPTIONS = {
  ...Object.fromEntries(STRING_FLAGS.map((flag) => [flag, { type: 'string' as const, multiple: true }])),
  help: { type: 'boolean' as const, short: 'h' },
  'password-stdin': { type: 'boolean' as const },
};

const MIGRATION_USAGE = ['migration:run', 'migration:revert', 'migration:generate --name add-something'];

function help(): string {
  return [
    'Usage: npm run cli -- <command> [--flag value …]',
    '',
    'Commands:',
    ...Object.values(DATA_COMMANDS).map((c) => `  ${c.usage}`),
    ...MIGRATION_USAGE.map((u) => `  ${u}`),
    '',
    'Uses the same configuration as the server (DATABASE_URL or DATA_DIR). Prints one JSON object on stdout.',
  ].join('\n');
}

function parse(argv: string[]): { command: string | undefined; flags: Flags } {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: FLAG_OPTIONS, strict: true, allowPositionals: true });
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n\n${help()}`);
  }
  const { help: wantsHelp, 'password-stdin': passwordStdin, ...values } = parsed.values;
  // A flag given once is a string, given several times a list (only --redirect-uri may repeat).
  const flags: Flags = Object.fromEntries(
    Object.entries(values as Record<string, string[]>).map(([k, v]) => [k, v.length === 1 && k !== 'redirect-uri' ? v[0] : v]),
  );
  if (passwordStdin) {
    if (flags.password !== undefined) throw new UsageError('Give --password or --password-stdin, not both');
    // The password's one line from standard input: kept out of the shell history and the process list.
    flags.password = readFileSync(0, 'utf8').replace(/\r?\n$/, '');
  }
  return { command: wantsHelp ? 'help' : parsed.positionals[0], flags };
}

async function runDataCommand(config: AppConfig, name: string, flags: Flags): Promise<unknown> {
  const command = DATA_COMMANDS[name]!;
  const target = await openDatabaseTarget(config, { shareRunning: true });
  try {
    await prepareDatabase(config, target, { migrate: config.database.migrationsRun });
    @Module({ imports: coreModules({ ...config, database: { ...config.database, poolSize: 2 } }, target) })
    class CliModule {}
    const app = await NestFactory.createApplicationContext(CliModule, { logger: ['error'], abortOnError: false });
    try {
      return await command.run(app, flags);
    } finally {
      await app.close();
    }
  } finally {
    await target.close();
  }
}

export async function runCli(argv: string[], env: Record<string, string | undefined>): Promise<unknown> {
  const { command, flags } = parse(argv);
  if (!command || command === 'help') return { help: help() };
  const { config } = resolveSecretKey(loadConfig(env));
  if (command in DATA_COMMANDS) return runDataCommand(config, command, flags);
  if (command === 'migration:generate') {
    return migrationGenerate(config, optional(flags, 'name'), projectRoot());
  }
  if (command === 'migration:run' || command === 'migration:revert') {
    const target = await openDatabaseTarget(config, { shareRunning: true });
    try {
      return await (command === 'migration:run' ? migrationRun(config, target) : migrationRevert(config, target));
    } finally {
      await target.close();
    }
  }
  throw new UsageError(`Unknown command "${command}".\n\n${help()}`);
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  runCli(process.argv.slice(2), readEnvironment())
    .then((result) => {
      if (result && typeof result === 'object' && 'help' in result) console.log((result as { help: string }).help);
      else console.log(JSON.stringify(result));
      process.exit(0);
    })
    .catch((err: unknown) => {
      if (err instanceof DomainError) {
        // Every invalid field of the input, one line each.
        for (const failure of failuresOf(err))
          console.error(`agora: ${failure.field ? `--${flagName(failure.field)}: ` : ''}${failure.message}`);
      } else {
        const known = err instanceof UsageError || err instanceof ConfigError;
        console.error(`agora: ${known ? (err as Error).message : String((err as Error)?.stack ?? err)}`);
      }
      process.exit(err instanceof UsageError ? 2 : 1);
    });
}

/** A domain field (`expiresAt`) as the flag that sets it (`expires-at`). */
function flagName(field: string): string {
  return field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}
