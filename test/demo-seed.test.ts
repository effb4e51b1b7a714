import pg from 'pg';
import { DataSource } from 'typeorm';
import { serverUrl } from './support/database.js';
import { createOrganizer } from './support/events.js';
import { createUserWithToken } from './support/fixtures.js';
import { graphql } from './support/http.js';
import { CliResult, runCli, startCli } from './support/processes.js';
import { startTestApp, TestApp } from './support/test-app.js';

// Holding a lock from another session needs a PostgreSQL server: PGlite is one session.
const onServer = serverUrl() ? it : it.skip;

const DEMO_SLUGS = ['demo-paris-rust', 'demo-global-devs'];

/** What the demo has written: its users, its organizers, their events and the registrations to them. */
async function demoRows(t: TestApp): Promise<Record<string, number>> {
  const [row] = (await t.get(DataSource).query(
    `SELECT (SELECT count(*) FROM users WHERE username LIKE 'demo-%')::int AS users,
            (SELECT count(*) FROM organizers o JOIN organizer_members m ON m.organizer_id = o.id
               JOIN users u ON u.id = m.user_id WHERE o.slug = ANY($1) AND u.username LIKE 'demo-%')::int AS organizers,
            (SELECT count(*) FROM events e JOIN organizers o ON o.id = e.organizer_id WHERE o.slug = ANY($1))::int AS events,
            (SELECT count(*) FROM registrations r JOIN events e ON e.id = r.event_id
               JOIN organizers o ON o.id = e.organizer_id WHERE o.slug = ANY($1))::int AS registrations`,
    [DEMO_SLUGS],
  )) as Record<string, number>[];
  return row!;
}

const NOTHING = { users: 0, organizers: 0, events: 0, registrations: 0 };

/** The whole demo, once: what the seed printed, what the rows hold and what a newcomer's first query finds. */
async function expectWholeDemo(t: TestApp, seeded: CliResult): Promise<void> {
  expect(seeded.stderr).toBe('');
  expect(seeded.json).toMatchObject({ seeded: true, organizers: DEMO_SLUGS, events: 8 });
  expect(seeded.json.users).toHaveLength(7);
  expect(await demoRows(t)).toEqual({ users: 7, organizers: 2, events: 8, registrations: 17 });

  const res = await graphql(t.url, '{ events(first: 20) { nodes { title timeZone phase status organizer { slug } } totalCount } }');
  expect(res.status).toBe(200);
  const events = res.body.data?.events;
  // Listed: published and public. The draft and the unlisted breakfast are not.
  expect(events.totalCount).toBe(6);
  expect(new Set(events.nodes.map((e: { timeZone: string }) => e.timeZone))).toEqual(
    new Set(['Europe/Paris', 'Asia/Tokyo', 'America/New_York', 'America/Sao_Paulo']),
  );
  expect(events.nodes.map((e: { phase: string }) => e.phase)).toContain('ENDED');
  expect(events.nodes.map((e: { phase: string }) => e.phase)).toContain('UPCOMING');

  // Each event starts at a sensible hour where it takes place, whenever the seed ran.
  const starts = (await t
    .get(DataSource)
    .query(`SELECT e.title, e.starts_at, e.time_zone FROM events e JOIN organizers o ON o.id = e.organizer_id WHERE o.slug = ANY($1)`, [
      DEMO_SLUGS,
    ])) as { title: string; starts_at: Date; time_zone: string }[];
  const local = (at: Date, timeZone: string) =>
    new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(at);
  expect(Object.fromEntries(starts.map((e) => [e.title, local(e.starts_at, e.time_zone)]))).toEqual({
    'Rust & Coffee: async in practice': '09:00',
    'Embedded Rust workshop': '10:00',
    'Rust in 2027: planning session': '19:00',
    'Rust meetup: retrospective': '18:30',
    'Tokyo Web Performance Night': '18:30',
    'New York GraphQL Summit': '09:00',
    'São Paulo Open Source Day': '10:00',
    'Sydney Cloud Native Breakfast': '08:00',
  });
  const tokyo = starts.find((e) => e.time_zone === 'Asia/Tokyo')!;
  // Still relative to now in days: nine days ahead, give or take the day boundary in Tokyo.
  expect(Math.abs(tokyo.starts_at.getTime() - Date.now() - 9 * 86_400_000)).toBeLessThan(86_400_000);

  // The small Paris event is full, with people waiting.
  const full = await graphql(t.url, '{ events(first: 1, filter: { search: "async in practice" }) { nodes { capacity spotsLeft } } }');
  expect(full.body.data?.events.nodes).toEqual([{ capacity: 4, spotsLeft: 0 }]);
}

/** A session of its own holding `table` locked, so that the seed waits at its first statement there. */
async function lockTable(databaseUrl: string, table: string) {
  const locker = new pg.Client({ connectionString: databaseUrl });
  await locker.connect();
  await locker.query('BEGIN');
  await locker.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
  const waiting = async () => {
    // In a transaction the activity statistics are a snapshot taken once.
    await locker.query('SELECT pg_stat_clear_snapshot()');
    const { rows } = await locker.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE $1`,
      [`%${table}%`],
    );
    return rows[0]!.n > 0;
  };
  return {
    async untilWaitedOn(): Promise<void> {
      const deadline = Date.now() + 30_000;
      while (!(await waiting())) {
        if (Date.now() > deadline) throw new Error(`nothing waited on ${table}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    async release(): Promise<void> {
      await locker.query('ROLLBACK');
      await locker.end();
    },
  };
}

describe('npm run cli -- seed:demo', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await startTestApp();
  });
  afterEach(() => t.close());

  it("fills a demo a newcomer's first events query finds, once", async () => {
    const seeded = await runCli(t.databaseEnv, 'seed:demo', '--password', 'demo-password-123');
    await expectWholeDemo(t, seeded);
    expect(seeded.json.password).toBe('demo-password-123');

    const again = await runCli(t.databaseEnv, 'seed:demo');
    expect(again.code).toBe(0);
    expect(again.json).toEqual({ seeded: false, message: 'The demo data is already there; nothing was changed.' });
  }, 120_000);

  it('leaves nothing behind when a step fails half-way, so that a rerun fills the whole demo', async () => {
    // Someone has the second demo organizer's slug: the seed fails once the first one is complete.
    const { token } = await createUserWithToken(t);
    await createOrganizer(t, token, { slug: 'demo-global-devs' });

    const failed = await runCli(t.databaseEnv, 'seed:demo');
    expect(failed).toMatchObject({ code: 1, stdout: '', stderr: 'agora: This slug is already taken.\n' });
    expect(await demoRows(t)).toEqual(NOTHING);

    await t.get(DataSource).query(`DELETE FROM organizers WHERE slug = 'demo-global-devs'`);
    await expectWholeDemo(t, await runCli(t.databaseEnv, 'seed:demo'));
  }, 120_000);

  onServer(
    'rolls back when SIGTERM comes half-way and says so, so that a rerun fills the whole demo',
    async () => {
      // The seed stops at its first registration, once it has written users, an organizer and an event.
      const lock = await lockTable(t.databaseEnv.DATABASE_URL!, 'registrations');
      const run = startCli(t.databaseEnv, 'seed:demo');
      try {
        await lock.untilWaitedOn();
        run.child.kill('SIGTERM');
      } finally {
        await lock.release();
      }
      expect(await run.result).toMatchObject({
        code: 143,
        stdout: '',
        stderr: 'agora: Interrupted by SIGTERM: the demo seed was rolled back; no demo data was written\n',
      });
      expect(await demoRows(t)).toEqual(NOTHING);

      await expectWholeDemo(t, await runCli(t.databaseEnv, 'seed:demo'));
    },
    120_000,
  );
});
