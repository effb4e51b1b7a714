import { UsageError } from './cli-error.js';
import { CommandName, COMMANDS, CommandSpec, isCommand } from './command-specs.js';

/** A command's flags by name: a string, a list for a repeatable flag, absent when not given. */
export type Flags = Record<string, string | string[] | undefined>;

export type CommandLine =
  | { kind: 'help'; command?: CommandName }
  | {
      kind: 'run';
      command: CommandName;
      flags: Flags;
      passwordFromStdin: boolean;
      /** A deprecated spelling was used: one line each for stderr; the command still runs. */
      warnings: string[];
    };

/** Whether each flag of any command (or former name of one) takes a value: the same name means the same kind everywhere. */
const TAKES_VALUE = new Map<string, boolean>(
  Object.values(COMMANDS).flatMap((spec: CommandSpec) =>
    Object.entries(spec.flags).flatMap(([name, flag]) =>
      [name, ...(flag.aliases ?? [])].map((n): [string, boolean] => [n, flag.value !== undefined]),
    ),
  ),
);

/** The flag of `spec` that `name` names: itself, or the flag that `name` is a former name of. */
function resolveFlag(spec: CommandSpec, name: string): string | undefined {
  if (Object.hasOwn(spec.flags, name)) return name;
  return Object.entries(spec.flags).find(([, flag]) => flag.aliases?.includes(name))?.[0];
}

export const HELP_HINT = 'Run "npm run cli -- help" for the commands.';

export function commandHint(command: CommandName): string {
  return `Run "npm run cli -- ${command} --help" for its flags.`;
}

interface Tokens {
  positionals: string[];
  /** Each flag as written (`raw`: `--name`, `-x`), its name without dashes and its value. */
  given: { raw: string; name: string; value?: string }[];
  help: boolean;
}

function tokenize(argv: string[]): Tokens {
  const tokens: Tokens = { positionals: [], given: [], help: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      tokens.positionals.push(...argv.slice(i + 1));
      break;
    }
    if (arg === '-h' || arg === '--help') tokens.help = true;
    else if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      const raw = eq === -1 ? arg : arg.slice(0, eq);
      const name = raw.slice(2);
      const inline = eq === -1 ? undefined : arg.slice(eq + 1);
      // An unknown flag's value (if it has one) is left as an argument: the unknown flag is reported first.
      if (inline === undefined && TAKES_VALUE.get(name) && !(argv[i + 1] ?? '--').startsWith('--')) {
        tokens.given.push({ raw, name, value: argv[++i] });
      } else tokens.given.push({ raw, name, value: inline });
    } else if (arg.startsWith('-') && arg.length > 1) tokens.given.push({ raw: arg, name: arg });
    else tokens.positionals.push(arg);
  }
  return tokens;
}

/**
 * Reads `<command> [--flag value …]` against the command's declared flags. Everything wrong with the
 * call is a UsageError, before anything opens the database.
 */
export function parseCommandLine(argv: string[]): CommandLine {
  const { positionals, given, help } = tokenize(argv);
  const [first, ...rest] = positionals;

  if (first === undefined || first === 'help') {
    const [topic, ...extra] = first === 'help' ? rest : [];
    const command = topic === undefined ? undefined : knownCommand(topic);
    if (extra.length > 0) throw new UsageError(`Unexpected argument "${extra[0]}" after help ${topic}. ${HELP_HINT}`);
    if (first === undefined && !help && given.length > 0) {
      const unknown = given.filter((flag) => !TAKES_VALUE.has(flag.name));
      throw new UsageError(`${unknown.length > 0 ? unknownFlags(unknown) : `${given[0]!.raw} without a command`}. ${HELP_HINT}`);
    }
    return { kind: 'help', command };
  }
  const command = knownCommand(first);
  if (help) return { kind: 'help', command };
  const spec = COMMANDS[command];
  const hint = commandHint(command);

  // Everything wrong with the call is collected and reported at once, one line each.
  const problems: string[] = [];
  const warnings: string[] = [];
  const unknown = given.filter((flag) => resolveFlag(spec, flag.name) === undefined);
  for (const flag of new Map(unknown.map((f) => [f.raw, f])).values()) {
    const suggestion = closest(flag.name, Object.keys(spec.flags));
    problems.push(`Unknown flag ${flag.raw} for ${command}${suggestion ? ` (did you mean --${suggestion}?)` : ''}`);
  }
  // An unknown flag's value is left as an argument: only without one is an argument surely out of place.
  if (unknown.length === 0 && rest.length > 0) problems.push(`Unexpected argument "${rest[0]}" after ${command}: flags start with "--"`);

  const flags: Flags = {};
  const reported = new Set<string>();
  const firstWritten = new Map<string, string>();
  for (const { raw, name: written, value } of given) {
    const name = resolveFlag(spec, written);
    if (name === undefined) continue;
    const flag = spec.flags[name]!;
    if (name !== written) {
      const warning = `warning: ${raw} is deprecated for ${command}: use --${name} (${raw} still works for now)`;
      if (!warnings.includes(warning)) warnings.push(warning);
    }
    if (flag.value === undefined) {
      if (value !== undefined) problems.push(`${raw} takes no value`);
      flags[name] = 'true';
    } else if (value === undefined) {
      problems.push(`${raw} needs a value (${raw} ${flag.value}; one starting with "--" as ${raw}=…)`);
      reported.add(name);
    } else if (flags[name] !== undefined && !flag.repeatable) {
      const former = [...new Set([firstWritten.get(name), raw])].find((r) => r !== `--${name}`);
      problems.push(`--${name} may be given only once${former ? ` (${former} is the same flag)` : ''}`);
    } else {
      flags[name] = flag.repeatable ? [...((flags[name] as string[] | undefined) ?? []), value] : value;
      if (!firstWritten.has(name)) firstWritten.set(name, raw);
    }
  }
  const passwordFromStdin = flags['password-stdin'] !== undefined;
  delete flags['password-stdin'];
  if (passwordFromStdin && flags.password !== undefined) problems.push('Give --password or --password-stdin, not both');

  for (const [name, flag] of Object.entries(spec.flags)) {
    const missing = flag.required && flags[name] === undefined && !(name === 'password' && passwordFromStdin);
    if (missing && !reported.has(name)) problems.push(`--${name} is required`);
  }

  for (const [name, flag] of Object.entries(spec.flags)) {
    for (const value of flags[name] === undefined ? [] : [flags[name]].flat()) {
      const problem = value === '' ? 'must not be empty' : flag.check?.(value);
      if (problem) problems.push(`--${name}: ${problem}`);
    }
  }
  if (problems.length > 0) throw new UsageError([...problems, hint].join('\n'));

  return { kind: 'run', command, flags, passwordFromStdin, warnings };
}

function knownCommand(name: string): CommandName {
  if (isCommand(name)) return name;
  const suggestion = closest(name, Object.keys(COMMANDS));
  throw new UsageError(`Unknown command "${name}"${suggestion ? ` (did you mean ${suggestion}?)` : ''}. ${HELP_HINT}`);
}

function unknownFlags(flags: { raw: string }[]): string {
  const names = [...new Set(flags.map((flag) => flag.raw))];
  return `Unknown flag${names.length > 1 ? 's' : ''} ${names.join(', ')}`;
}

/** The one candidate that starts with `name` (`--user` for `--username`), else the closest within two edits (a typo). */
function closest(name: string, candidates: string[]): string | undefined {
  const longer = candidates.filter((c) => c.startsWith(name));
  if (longer.length === 1) return longer[0];
  const scored = candidates.map((c) => ({ c, d: editDistance(name, c) })).filter(({ d }) => d <= 2);
  const best = Math.min(...scored.map(({ d }) => d));
  const at = scored.filter(({ d }) => d === best);
  return at.length === 1 ? at[0]!.c : undefined;
}

function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) next.push(Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)));
    row = next;
  }
  return row[b.length]!;
}
