import { MIGRATIONS } from '../../src/database/migrations/index.js';
import { Fleet, scratchDatabase, ScratchDatabase, startFleet } from './fleet.js';

const HOUSEKEEPING_INTERVAL_MS = 2_000;

describe('three instances started at the same moment on an empty database', () => {
  let db: ScratchDatabase;
  let fleet: Fleet;
  let startedAt: number;
  let readyAt: number;

  beforeAll(async () => {
    db = await scratchDatabase();
    startedAt = Date.now();
    fleet = await startFleet(db.url, 3, { HOUSEKEEPING_INTERVAL_SECONDS: String(HOUSEKEEPING_INTERVAL_MS / 1000) });
    readyAt = Date.now();
  });

  afterAll(async () => {
    if (fleet) expect(await fleet.stop()).toEqual([0, 0, 0]);
    await db?.drop();
  });

  it('all become ready, and exactly one of them applied the migrations, each once', async () => {
    for (const instance of fleet.instances) {
      const ready = await fetch(`${instance.url}/readyz`);
      expect(await ready.json()).toEqual({ status: 'ok', database: 'ok' });
    }
    const rows = await db.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY id');
    expect(rows.map((r) => r.name)).toEqual(MIGRATIONS.map((m) => m.name));

    // Each instance logs what it applied: the one that held the lock first applied all, the others none.
    const applied = fleet.instances.map((i) => i.logs().find((l) => l.msg === 'Database ready')?.migrationsApplied as string[]);
    expect(applied.map((list) => list.length).sort()).toEqual([0, 0, MIGRATIONS.length]);
  });

  it('created exactly one signing key per algorithm, which every instance publishes', async () => {
    const keys = await db.query<{ kid: string; alg: string }>('SELECT kid, alg FROM oauth_signing_keys ORDER BY kid');
    expect(keys.map((k) => k.alg).sort()).toEqual(['ES256', 'EdDSA', 'RS256']);
    for (const instance of fleet.instances) {
      const jwks = (await (await fetch(`${instance.url}/oauth/discovery/keys`)).json()) as { keys: { kid: string }[] };
      expect(jwks.keys.map((k) => k.kid).sort()).toEqual(keys.map((k) => k.kid).sort());
    }
  });

  it('runs housekeeping once per interval for the whole fleet, not once per instance', async () => {
    // Real timers in real processes: wait for several intervals.
    await new Promise((r) => setTimeout(r, Math.max(0, readyAt + 4 * HOUSEKEEPING_INTERVAL_MS - Date.now())));
    const runs = fleet.instances
      .flatMap((i) => i.logs().filter((l) => String(l.msg).startsWith('Housekeeping ran')))
      .map((l) => Date.parse(String(l.time)))
      .sort((a, b) => a - b);
    const span = Date.now() - startedAt;
    // Each instance checks four times an interval: every check would have run without the shared claim.
    expect(runs.length).toBeGreaterThanOrEqual(2);
    expect(runs.length).toBeLessThanOrEqual(Math.floor(span / HOUSEKEEPING_INTERVAL_MS) + 1);
    for (let i = 1; i < runs.length; i++) expect(runs[i]! - runs[i - 1]!).toBeGreaterThan(HOUSEKEEPING_INTERVAL_MS * 0.9);
    const [row] = await db.query<{ started_at: Date }>('SELECT started_at FROM housekeeping_runs');
    expect(row!.started_at.getTime()).toBeGreaterThan(readyAt - HOUSEKEEPING_INTERVAL_MS);
  });
});
