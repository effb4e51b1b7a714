import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * The only place that reads process.env. A `.env` file in the working directory, when present,
 * fills in variables that the real environment does not set.
 */
export function readEnvironment(cwd = process.cwd()): Record<string, string | undefined> {
  const file = resolve(cwd, '.env');
  if (existsSync(file)) process.loadEnvFile(file);
  return { ...process.env };
}
