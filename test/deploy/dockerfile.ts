import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, posix, relative } from 'node:path';

/** One instruction, its continuation lines joined: `COPY --from=build /app/dist ./dist`. */
export interface Instruction {
  keyword: string;
  /** Leading `--name=value` options (`--from`, `--chown`, `--interval`…). */
  flags: Record<string, string>;
  /** The rest, after the options. */
  args: string;
  line: number;
}

export interface Stage {
  name?: string;
  base: string;
  instructions: Instruction[];
}

export interface Dockerfile {
  /** ARG instructions before the first FROM. */
  globalArgs: Instruction[];
  stages: Stage[];
}

/**
 * A small Dockerfile reader for the instructions this project uses: comment lines, line continuations,
 * leading options. Syntax errors are the linter's business (dockerfile-utils in image.test.ts).
 */
export function parseDockerfile(text: string): Dockerfile {
  const result: Dockerfile = { globalArgs: [], stages: [] };
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const start = i;
    let logical = lines[i]!.trim();
    if (logical === '' || logical.startsWith('#')) continue;
    while (logical.endsWith('\\')) {
      logical = logical.slice(0, -1);
      i++;
      while (i < lines.length && lines[i]!.trim().startsWith('#')) i++;
      if (i >= lines.length) break;
      logical += ' ' + lines[i]!.trim();
    }
    const [, keyword, rest] = /^(\S+)\s*(.*)$/s.exec(logical)!;
    let args = rest!.trim();
    const flags: Record<string, string> = {};
    for (let m = /^--([\w-]+)(?:=(\S*))?\s*/.exec(args); m; m = /^--([\w-]+)(?:=(\S*))?\s*/.exec(args)) {
      flags[m[1]!] = m[2] ?? '';
      args = args.slice(m[0].length);
    }
    const instruction: Instruction = { keyword: keyword!.toUpperCase(), flags, args, line: start + 1 };
    if (instruction.keyword === 'FROM') {
      const [base, as, name] = args.split(/\s+/);
      result.stages.push({ base: base!, name: as?.toUpperCase() === 'AS' ? name : undefined, instructions: [] });
    } else if (result.stages.length === 0) {
      if (instruction.keyword === 'ARG') result.globalArgs.push(instruction);
    } else {
      result.stages.at(-1)!.instructions.push(instruction);
    }
  }
  return result;
}

/** The exec form of CMD, ENTRYPOINT, RUN or HEALTHCHECK CMD, or undefined for the shell form. */
export function execForm(args: string): string[] | undefined {
  if (!args.startsWith('[')) return undefined;
  const parsed = JSON.parse(args) as unknown;
  return Array.isArray(parsed) && parsed.every((a) => typeof a === 'string') ? parsed : undefined;
}

/** `ENV A=1 B="two words"` → { A: '1', B: 'two words' } (the key=value form; the legacy `ENV A 1` too). */
export function envPairs(args: string): Record<string, string> {
  if (!/^[\w.-]+=/.test(args)) {
    const [, key, value] = /^(\S+)\s+(.*)$/.exec(args)!;
    return { [key!]: value! };
  }
  const pairs: Record<string, string> = {};
  for (const m of args.matchAll(/([\w.-]+)=("(?:[^"\\]|\\.)*"|'[^']*'|\S*)/g)) {
    const raw = m[2]!;
    pairs[m[1]!] = raw.startsWith('"') ? (JSON.parse(raw) as string) : raw.startsWith("'") ? raw.slice(1, -1) : raw;
  }
  return pairs;
}

export interface DockerIgnore {
  ignored(path: string): boolean;
  /** Whether an exception (`!pattern`) may bring back something under this ignored folder. */
  mayReinclude(folder: string): boolean;
}

/** Docker's .dockerignore rules: the last matching pattern wins, a pattern matching a folder covers what is in it. */
export function dockerignore(text: string): DockerIgnore {
  const rules = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const include = l.startsWith('!');
      const pattern = posix.normalize(include ? l.slice(1) : l).replace(/^\/+|\/+$/g, '');
      const source = pattern
        .split(/(\*\*\/|\*\*|\*|\?)/)
        .map((part) => {
          if (part === '**/') return '(?:.*/)?';
          if (part === '**') return '.*';
          if (part === '*') return '[^/]*';
          if (part === '?') return '[^/]';
          return part.replace(/[.+^${}()|[\]\\]/g, '\\$&');
        })
        .join('');
      return { include, literal: pattern.split(/[*?[]/)[0]!, regex: new RegExp(`^${source}$`) };
    });
  return {
    ignored(path) {
      const prefixes = path.split('/').map((_, i, parts) => parts.slice(0, i + 1).join('/'));
      let ignored = false;
      for (const rule of rules) if (prefixes.some((p) => rule.regex.test(p))) ignored = !rule.include;
      return ignored;
    },
    mayReinclude(folder) {
      return rules.some((r) => r.include && (r.literal.startsWith(`${folder}/`) || folder.startsWith(r.literal)));
    },
  };
}

/** How this test performs each RUN line of the Dockerfile; a RUN it does not know fails the test. */
export type RunStep = (cwd: string) => Promise<void>;

export interface BuiltImage {
  /** The image's filesystem: `root/app` is WORKDIR /app. */
  root: string;
  workdir: string;
  env: Record<string, string>;
  user?: string;
  cmd?: string[];
  entrypoint?: string[];
  healthcheck?: Instruction;
  /** Every file the build context offered to COPY, relative to the project. */
  contextFiles: string[];
  remove(): void;
}

/** The files Docker sends as the build context: not ignored, without walking folders nothing can come back from. */
function contextFilesOf(dir: string, rules: DockerIgnore, prefix = ''): string[] {
  return readdirSync(join(dir, prefix), { withFileTypes: true }).flatMap((entry) => {
    const path = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (!entry.isDirectory()) return rules.ignored(path) ? [] : [path];
    return rules.ignored(path) && !rules.mayReinclude(path) ? [] : contextFilesOf(dir, rules, path);
  });
}

export function run(command: string, args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, timeout: 540_000, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) =>
      error ? reject(new Error(`${command} ${args.join(' ')} in ${cwd} failed:\n${stdout}${stderr}`)) : resolve(),
    );
  });
}

/**
 * Builds the Dockerfile without Docker: each stage is a folder standing for its filesystem, COPY copies
 * from the build context (filtered by .dockerignore, as Docker sends it) or from an earlier stage's
 * folder, WORKDIR/ENV/USER/CMD/HEALTHCHECK are recorded, and each RUN is performed by `runSteps`.
 */
export async function buildWithoutDocker(context: string, runSteps: Record<string, RunStep>): Promise<BuiltImage> {
  const dockerfile = parseDockerfile(readFileSync(join(context, 'Dockerfile'), 'utf8'));
  const ignored = dockerignore(existsSync(join(context, '.dockerignore')) ? readFileSync(join(context, '.dockerignore'), 'utf8') : '');
  const contextFiles = contextFilesOf(context, ignored);
  const scratch = mkdtempSync(join(tmpdir(), 'agora-image-'));
  const stageRoots = new Map<string, string>();
  let image: BuiltImage | undefined;

  for (const [index, stage] of dockerfile.stages.entries()) {
    const root = join(scratch, `stage-${index}`);
    mkdirSync(root, { recursive: true });
    const state = { workdir: '/', env: {} as Record<string, string>, user: undefined as string | undefined };
    const inside = (path: string) => join(root, posix.resolve(state.workdir, path));
    const result: BuiltImage = {
      root,
      workdir: '/',
      env: state.env,
      contextFiles,
      remove: () => rmSync(scratch, { recursive: true, force: true }),
    };

    for (const instruction of stage.instructions) {
      const { keyword, args, flags } = instruction;
      if (keyword === 'WORKDIR') {
        state.workdir = posix.resolve(state.workdir, args);
        mkdirSync(inside('.'), { recursive: true });
      } else if (keyword === 'ENV') {
        Object.assign(state.env, envPairs(args));
      } else if (keyword === 'USER') {
        state.user = args;
      } else if (keyword === 'CMD') {
        result.cmd = execForm(args) ?? ['/bin/sh', '-c', args];
      } else if (keyword === 'ENTRYPOINT') {
        result.entrypoint = execForm(args) ?? ['/bin/sh', '-c', args];
      } else if (keyword === 'HEALTHCHECK') {
        result.healthcheck = instruction;
      } else if (keyword === 'COPY') {
        const parts = execForm(args) ?? args.split(/\s+/);
        const dest = parts.at(-1)!;
        const sources = parts.slice(0, -1);
        const toFolder = sources.length > 1 || dest.endsWith('/');
        for (const source of sources) {
          const from = flags.from;
          const fromRoot = from === undefined ? undefined : stageRoots.get(from);
          if (from !== undefined && !fromRoot) throw new Error(`line ${instruction.line}: COPY --from=${from}: no such stage`);
          // From a stage, paths are in its filesystem; from the context, relative to the project.
          const origin = fromRoot ? join(fromRoot, posix.resolve('/', source)) : join(context, source);
          const target = toFolder ? join(inside(dest), basename(source)) : inside(dest);
          if (fromRoot) {
            if (!existsSync(origin)) throw new Error(`line ${instruction.line}: COPY ${source}: not in stage ${from}`);
            const isFolder = statSync(origin).isDirectory();
            mkdirSync(isFolder ? target : dirname(target), { recursive: true });
            cpSync(origin, target, { recursive: true, verbatimSymlinks: true, dereference: false });
            continue;
          }
          const rel = relative(context, origin);
          const files = contextFiles.filter((f) => f === rel || f.startsWith(`${rel}/`));
          if (files.length === 0) throw new Error(`line ${instruction.line}: COPY ${source}: not in the build context (.dockerignore?)`);
          for (const file of files) {
            const to = file === rel ? target : join(inside(dest), relative(rel, file));
            mkdirSync(dirname(to), { recursive: true });
            cpSync(join(context, file), to);
          }
        }
      } else if (keyword === 'RUN') {
        const step = runSteps[args];
        if (!step)
          throw new Error(`line ${instruction.line}: RUN ${args}: test/deploy does not know how to perform it; add it to the steps`);
        await step(inside('.'));
      } else if (!['ARG', 'EXPOSE', 'STOPSIGNAL', 'LABEL'].includes(keyword)) {
        throw new Error(`line ${instruction.line}: ${keyword}: not understood by test/deploy/dockerfile.ts`);
      }
    }
    result.workdir = state.workdir;
    result.user = state.user;
    stageRoots.set(stage.name ?? String(index), root);
    image = result;
  }
  if (!image) throw new Error('Dockerfile has no FROM');
  return image;
}
