import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppConfig } from './config.schema.js';

/**
 * The configuration with its secret key: SECRET_KEY when set; otherwise (never in production, which
 * config validation forbids) a random key generated once into DATA_DIR/secret.key, so `npm start`
 * needs no set-up and keeps its keys across restarts.
 */
export function resolveSecretKey(config: AppConfig): { config: AppConfig; generated?: string } {
  if (config.secretKey) return { config };
  const file = join(config.database.dataDir, 'secret.key');
  if (!existsSync(file)) {
    mkdirSync(config.database.dataDir, { recursive: true, mode: 0o700 });
    try {
      writeFileSync(file, randomBytes(32).toString('base64url'), { mode: 0o600, flag: 'wx' });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err; // another process made it first
    }
  }
  return { config: { ...config, secretKey: readFileSync(file, 'utf8').trim() }, generated: file };
}
