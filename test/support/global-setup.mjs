// Migrates one template database that every test file copies (see database.ts). Jest loads this file
// outside its TypeScript transform, so it uses the build that `npm test` makes first (pretest).
import 'reflect-metadata';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

const dist = new URL('../../dist/src/', import.meta.url);
if (!existsSync(new URL('main.js', dist))) throw new Error('dist/ is missing: run the tests with `npm test`, which builds first');
const { loadConfig } = await import(new URL('config/config.schema.js', dist).href);
const { openDatabaseTarget } = await import(new URL('database/database-target.js', dist).href);
const { prepareDatabase } = await import(new URL('database/prepare-database.js', dist).href);

export async function adminQuery(sql) {
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export default async function globalSetup() {
  const url = process.env.DATABASE_URL || undefined;
  if (url) {
    const name = `agora_tpl_${process.pid}`;
    await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await adminQuery(`CREATE DATABASE ${name}`);
    const parsed = new URL(url);
    parsed.pathname = `/${name}`;
    const config = loadConfig({ NODE_ENV: 'test', DATABASE_URL: parsed.toString() });
    await prepareDatabase(config, await openDatabaseTarget(config), { migrate: true });
    process.env.AGORA_TEST_TEMPLATE_DB = name;
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'agora-template-'));
  const config = loadConfig({ NODE_ENV: 'test', DATA_DIR: dir });
  const target = await openDatabaseTarget(config);
  try {
    await prepareDatabase(config, target, { migrate: true });
  } finally {
    await target.close();
  }
  process.env.AGORA_TEST_TEMPLATE_DIR = dir;
}
