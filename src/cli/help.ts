import { CommandName, COMMANDS, FlagSpec } from './command-specs.js';

const PROGRAM = 'npm run cli --';

function flagUsage(name: string, flag: FlagSpec): string {
  return flag.value === undefined ? `--${name}` : `--${name} ${flag.value}`;
}

/** `users:create --username U … (--password P | --password-stdin)`: required flags bare, optional ones in brackets. */
export function usageLine(command: CommandName): string {
  const flags = COMMANDS[command].flags;
  const parts: string[] = [];
  for (const [name, flag] of Object.entries(flags)) {
    if (name === 'password-stdin') continue;
    let part = flagUsage(name, flag);
    if (name === 'password' && flags['password-stdin']) part = `${part} | --password-stdin`;
    if (flag.repeatable) part = `${part} [${flagUsage(name, flag)} …]`;
    parts.push(flag.required ? (name === 'password' ? `(${part})` : part) : `[${part}]`);
  }
  return [command, ...parts].join(' ');
}

function columns(rows: [string, string][]): string[] {
  const width = Math.max(...rows.map(([left]) => left.length));
  return rows.map(([left, right]) => `  ${left.padEnd(width)}   ${right}`);
}

export function globalHelp(): string {
  return [
    `Usage: ${PROGRAM} <command> [--flag value …]`,
    `       ${PROGRAM} <command> --help      (the command's flags, with an example)`,
    '',
    'Commands:',
    ...columns(Object.entries(COMMANDS).map(([name, spec]) => [name, spec.summary])),
    '',
    'Uses the same configuration as the server (DATABASE_URL or DATA_DIR, .env) and works while it runs.',
    'Prints one JSON object on stdout; problems go to stderr (exit 2: the call itself, exit 1: refused or failed).',
  ].join('\n');
}

export function commandHelp(command: CommandName): string {
  const spec = COMMANDS[command];
  const flags = Object.entries(spec.flags).map(([name, flag]): [string, string] => [
    flagUsage(name, flag),
    `${flag.description}${flag.required ? ' (required)' : ''}${flag.aliases ? `; formerly ${flag.aliases.map((a) => `--${a}`).join(', ')}, still accepted` : ''}`,
  ]);
  return [
    `Usage: ${PROGRAM} ${usageLine(command)}`,
    '',
    `${spec.summary}.`,
    ...(spec.notes ?? []),
    '',
    'Flags:',
    ...columns([...flags, ['-h, --help', 'Show this help']]),
    '',
    'Example:',
    `  ${PROGRAM} ${spec.example}`,
  ].join('\n');
}
