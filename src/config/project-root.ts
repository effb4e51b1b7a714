import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

let cached: string | undefined;

/** The folder holding package.json and schema.graphql, found from here whether running from src/ or dist/src/. */
export function projectRoot(): string {
  if (cached) return cached;
  let dir = import.meta.dirname;
  while (!existsSync(join(dir, 'schema.graphql')) || !existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`Project root (with schema.graphql) not found above ${import.meta.dirname}`);
    dir = parent;
  }
  cached = dir;
  return dir;
}
