import { rmSync } from 'node:fs';
import { adminQuery } from './global-setup.mjs';

export default async function globalTeardown() {
  const dir = process.env.AGORA_TEST_TEMPLATE_DIR;
  if (dir) rmSync(dir, { recursive: true, force: true });
  const db = process.env.AGORA_TEST_TEMPLATE_DB;
  if (db && process.env.DATABASE_URL) await adminQuery(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
}
