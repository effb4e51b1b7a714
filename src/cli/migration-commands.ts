import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { AppConfig } from '../config/config.schema.js';
import { openDatabaseTarget } from '../database/database-target.js';
import { runMigrations } from '../database/migrate.js';
import { openMigrationDataSource, TargetDataSource } from '../database/migration-data-source.js';
import { UsageError } from './cli-error.js';
import { migrationName } from './flag-values.js';

/** Runs `fn` on the data source, then destroys it (closing its database). */
async function using<T>(dataSource: TargetDataSource, fn: (ds: TargetDataSource) => Promise<T>): Promise<T> {
  try {
    await dataSource.initialize();
    return await fn(dataSource);
  } finally {
    await dataSource.destroy();
  }
}

export async function migrationRun(config: AppConfig): Promise<unknown> {
  const applied = await using(await openMigrationDataSource(config), runMigrations);
  return { applied: applied.map((m) => m.name) };
}

export async function migrationRevert(config: AppConfig): Promise<unknown> {
  return using(await openMigrationDataSource(config), async (ds) => {
    const before = await ds.query('SELECT name FROM schema_migrations ORDER BY id DESC LIMIT 1');
    await ds.undoLastMigration({ transaction: 'each' });
    return { reverted: (before as { name: string }[])[0]?.name ?? null };
  });
}

/**
 * The timestamp of a new migration: now, or just after the newest migration in `dir` when that one is
 * numbered later than now (hand-numbered ones are), so a fresh database runs the new one last.
 */
export function nextMigrationTimestamp(dir: string, now: number): number {
  const newest = Math.max(0, ...readdirSync(dir).map((file) => Number(/^(\d+)-/.exec(file)?.[1] ?? 0)));
  return Math.max(now, newest + 1);
}

/** `text` as `npm run format` writes it (prettier, a development dependency: as it is without one). */
async function formatted(text: string, path: string): Promise<string> {
  try {
    const prettier = await import('prettier');
    return await prettier.format(text, { ...(await prettier.resolveConfig(path)), filepath: path });
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_MODULE_NOT_FOUND') return text;
    throw err;
  }
}

/**
 * Writes a migration with the SQL that brings a database migrated to the latest version in line with
 * the entities. It compares against a scratch embedded database, never the configured one, so the
 * result depends only on the code. Named to run after every existing migration (nextMigrationTimestamp),
 * and written as prettier formats it, with the project's lint passing.
 */
export async function migrationGenerate(config: AppConfig, name: string | undefined, projectRoot: string): Promise<unknown> {
  if (!name) throw new UsageError('--name is required');
  const problem = migrationName(name);
  if (problem) throw new UsageError(`--name: ${problem}`);
  const scratchDir = mkdtempSync(join(tmpdir(), 'agora-migration-'));
  const scratch = await openDatabaseTarget({ ...config, database: { ...config.database, url: undefined, dataDir: scratchDir } });
  try {
    const sql = await using(new TargetDataSource(config, scratch), async (ds) => {
      await runMigrations(ds);
      return ds.driver.createSchemaBuilder().log();
    });
    if (sql.upQueries.length === 0) return { created: null, message: 'The entities match the migrations: nothing to generate.' };

    const dir = resolve(projectRoot, 'src/database/migrations');
    const timestamp = nextMigrationTimestamp(dir, Date.now());
    const className =
      name
        .split('-')
        .map((w) => w[0]!.toUpperCase() + w.slice(1))
        .join('') + timestamp;
    const file = `${timestamp}-${name}`;
    const q = (query: { query: string; parameters?: unknown[] }) =>
      `    await q.query(${JSON.stringify(query.query)}${query.parameters?.length ? `, ${JSON.stringify(query.parameters)}` : ''});`;
    const migrationPath = join(dir, `${file}.ts`);
    writeFileSync(
      migrationPath,
      await formatted(
        `import { MigrationInterface, QueryRunner } from 'typeorm';

export class ${className} implements MigrationInterface {
  name = '${className}';

  async up(q: QueryRunner): Promise<void> {
${sql.upQueries.map(q).join('\n')}
  }

  async down(q: QueryRunner): Promise<void> {
${sql.downQueries.reverse().map(q).join('\n')}
  }
}
`,
        migrationPath,
      ),
    );
    const indexPath = join(dir, 'index.ts');
    const lines = readFileSync(indexPath, 'utf8').split('\n');
    const lastImport = lines.findLastIndex((line) => line.startsWith('import '));
    lines.splice(lastImport + 1, 0, `import { ${className} } from './${file}.js';`);
    // The list keeps one migration per line, each with a trailing comma, as prettier writes it.
    const index = lines
      .join('\n')
      .replace(
        /(export const MIGRATIONS = \[[^\]]*?),?\s*\]/,
        (_, list: string) => `${list}${list.endsWith('[') ? '' : ','}\n  ${className},\n]`,
      );
    writeFileSync(indexPath, await formatted(index, indexPath));
    return { created: `src/database/migrations/${file}.ts`, statements: sql.upQueries.length };
  } finally {
    // The data source closed the scratch database when it was destroyed.
    rmSync(scratchDir, { recursive: true, force: true });
  }
}
