import { DataSource } from 'typeorm';

/** The names TypeORM records in schema_migrations for the migrations built into this code. */
export function builtMigrationNames(dataSource: DataSource): string[] {
  return dataSource.migrations.map((m) => m.name ?? m.constructor.name);
}

/**
 * How many of this code's migrations the database has not applied; `null` when it has no Agora schema
 * at all (no schema_migrations table, or an empty one).
 */
export async function pendingMigrations(dataSource: DataSource): Promise<number | null> {
  const [{ present }] = (await dataSource.query(`SELECT to_regclass('schema_migrations') IS NOT NULL AS present`)) as {
    present: boolean;
  }[];
  if (!present) return null;
  const rows = (await dataSource.query('SELECT name FROM schema_migrations')) as { name: string }[];
  if (rows.length === 0) return null;
  const applied = new Set(rows.map((r) => r.name));
  return builtMigrationNames(dataSource).filter((name) => !applied.has(name)).length;
}
