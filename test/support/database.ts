import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/**
 * Each test file gets a database of its own, copied from a template that the global setup migrated
 * once: a copy of an embedded data directory, or `CREATE DATABASE … TEMPLATE` on PostgreSQL when the
 * tests run with DATABASE_URL.
 */
export interface TestDatabase {
  env: Record<string, string>;
  drop(): Promise<void>;
}

export const TEMPLATE_DIR_VAR = 'AGORA_TEST_TEMPLATE_DIR';
export const TEMPLATE_DB_VAR = 'AGORA_TEST_TEMPLATE_DB';

export function serverUrl(): string | undefined {
  return process.env.DATABASE_URL || undefined;
}

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

export async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl() });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const url = serverUrl();
  if (url) {
    const template = process.env[TEMPLATE_DB_VAR];
    if (!template) throw new Error(`${TEMPLATE_DB_VAR} is not set: run the tests through jest (global setup)`);
    const name = `agora_t_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
    await adminQuery(`CREATE DATABASE ${name} TEMPLATE ${template}`);
    return {
      env: { DATABASE_URL: withDatabase(url, name) },
      drop: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
    };
  }
  const template = process.env[TEMPLATE_DIR_VAR];
  if (!template) throw new Error(`${TEMPLATE_DIR_VAR} is not set: run the tests through jest (global setup)`);
  const dir = mkdtempSync(join(tmpdir(), 'agora-test-'));
  cpSync(template, dir, { recursive: true });
  return { env: { DATA_DIR: dir, DATABASE_URL: '' }, drop: async () => rmSync(dir, { recursive: true, force: true }) };
}
