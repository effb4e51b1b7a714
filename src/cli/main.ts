import { readFileSync } from 'node:fs';
import { ConfigError } from '../config/config.schema.js';
import { readEnvironment } from '../config/environment.js';
import { DomainError, failuresOf } from '../errors/domain-error.js';
import { DatabaseSettingError } from '../database/prepare-database.js';
import { InterruptedError, CommandError, NotMigratedError, UsageError } from './cli-error.js';
import { COMMANDS } from './command-specs.js';
import { commandHelp, globalHelp } from './help.js';
import { commandHint, parseCommandLine } from './parse-command-line.js';

/**
 * What a call prints on stdout: the help text, or the command's result as one JSON object. `warn`
 * gets the lines for stderr that do not stop the command (a deprecated flag).
 */
export async function runCli(
  argv: string[],
  env: Record<string, string | undefined>,
  stdin: () => string,
  warn: (line: string) => void,
): Promise<string> {
  const line = parseCommandLine(argv);
  if (line.kind === 'help') return line.command ? commandHelp(line.command) : globalHelp();
  for (const warning of line.warnings) warn(warning);
  if (line.passwordFromStdin) {
    // The first line of standard input: kept out of the shell history and the process list.
    const password = stdin().split(/\r?\n/)[0]!;
    if (password === '')
      throw new UsageError(`--password-stdin: standard input has no password on its first line\n${commandHint(line.command)}`);
    line.flags.password = password;
  }
  // The application (Nest, TypeORM, every module) loads only for a command that runs.
  const { runCommand } = await import('./run-command.js');
  return JSON.stringify(await runCommand(line.command, line.flags, env));
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const argv = process.argv.slice(2);
  runCli(
    argv,
    readEnvironment(),
    () => readFileSync(0, 'utf8'),
    (line) => console.error(`agora: ${line}`),
  )
    .then((output) => {
      console.log(output);
      process.exit(0);
    })
    .catch((err: unknown) => {
      for (const line of problemLines(err, argv)) console.error(`agora: ${line}`);
      process.exit(err instanceof UsageError ? 2 : err instanceof InterruptedError ? err.exitCode : 1);
    });
}

/** What went wrong, for stderr: a domain error names the flag it is about, when the command has one by that name. */
function problemLines(err: unknown, argv: string[]): string[] {
  if (err instanceof DomainError) {
    const line = parseCommandLine(argv);
    const flags = line.kind === 'run' ? COMMANDS[line.command].flags : {};
    return failuresOf(err).map((failure) => {
      // `redirectUris` is set by the repeatable --redirect-uri; an existing user's `username` by --user.
      const fields = [failure.field, failure.field?.replace(/s$/, ''), failure.field === 'username' ? 'user' : undefined];
      const flag = fields.map((f) => f && flagName(f)).find((f) => f && Object.hasOwn(flags, f));
      return `${flag ? `--${flag}: ` : ''}${failure.message}`;
    });
  }
  const known =
    err instanceof UsageError ||
    err instanceof ConfigError ||
    err instanceof NotMigratedError ||
    err instanceof CommandError ||
    err instanceof DatabaseSettingError ||
    err instanceof InterruptedError;
  return [known ? (err as Error).message : String((err as Error)?.stack ?? err)];
}

/** A domain field (`expiresAt`) as the flag that sets it (`expires-at`). */
function flagName(field: string): string {
  return field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}
