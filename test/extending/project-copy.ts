import { execFile, execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ROOT } from '../support/processes.js';

export interface CommandResult {
  code: number;
  output: string;
}

/**
 * A copy of the project's files (what git tracks, plus new files not ignored) in a scratch folder,
 * sharing node_modules, where a test can change sources and run the project's own commands.
 */
export class ProjectCopy {
  readonly dir = mkdtempSync(join(tmpdir(), 'agora-copy-'));

  constructor() {
    const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
      .split('\0')
      .filter(Boolean);
    for (const file of files) {
      mkdirSync(dirname(join(this.dir, file)), { recursive: true });
      try {
        cpSync(join(ROOT, file), join(this.dir, file));
      } catch {
        // Deleted in the working tree but still tracked: not part of the project as it stands.
      }
    }
    symlinkSync(join(ROOT, 'node_modules'), join(this.dir, 'node_modules'));
  }

  read(file: string): string {
    return readFileSync(join(this.dir, file), 'utf8');
  }

  write(file: string, text: string): void {
    mkdirSync(dirname(join(this.dir, file)), { recursive: true });
    writeFileSync(join(this.dir, file), text);
  }

  /** Replaces the one occurrence of `find` in `file`; fails when it is missing or not unique. */
  replace(file: string, find: string, replacement: string): void {
    const text = this.read(file);
    const at = text.indexOf(find);
    if (at < 0 || text.indexOf(find, at + 1) >= 0) throw new Error(`${file}: expected exactly one occurrence of ${JSON.stringify(find)}`);
    this.write(file, text.slice(0, at) + replacement + text.slice(at + find.length));
  }

  /** Runs `command` in the copy; resolves with its exit code and combined output. */
  run(command: string, args: string[], env: Record<string, string> = {}): Promise<CommandResult> {
    return new Promise((done) => {
      execFile(
        command,
        args,
        { cwd: this.dir, env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0', ...env }, timeout: 300_000, maxBuffer: 64 * 1024 * 1024 },
        (error, stdout, stderr) => done({ code: error ? ((error as { code?: number }).code ?? 1) : 0, output: stdout + stderr }),
      );
    });
  }

  /** `npm run codegen` then `npm run typecheck`, as a developer runs them after editing a `.graphql` file. */
  async codegenAndTypecheck(): Promise<CommandResult> {
    const codegen = await this.run('node', ['scripts/codegen.mjs']);
    if (codegen.code !== 0) return codegen;
    return this.run('node', ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json', '--noEmit']);
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
