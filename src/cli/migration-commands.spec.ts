import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nextMigrationTimestamp } from './migration-commands.js';

describe('nextMigrationTimestamp', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agora-migrations-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  for (const file of ['1763800000000-foundation.ts', '1796400000003-counted-attempts.ts', 'index.ts']) writeFileSync(join(dir, file), '');

  it('numbers a new migration after a newest one numbered ahead of the clock, so it runs last', () => {
    expect(nextMigrationTimestamp(dir, 1795000000000)).toBe(1796400000004);
  });

  it('takes the time once the clock is past every migration', () => {
    expect(nextMigrationTimestamp(dir, 1797000000000)).toBe(1797000000000);
  });
});
