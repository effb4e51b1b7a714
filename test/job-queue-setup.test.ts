import pg from 'pg';
import { createTestDatabase, serverUrl, TestDatabase } from './support/database.js';
import { runCli } from './support/processes.js';

// Several processes starting at once on a database whose job queues do not exist yet (instances, WORKERS
// and the CLI after a deploy): each sets up the queues, one at a time, none fails.
const onServer = serverUrl() ? describe : describe.skip;

onServer('setting up the job queues', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.drop());

  it('is safe when six processes do it at once', async () => {
    const env = { ...db.env, SECRET_KEY: 'a-secret-key-for-the-queue-setup-test-0123456789' };
    const runs = await Promise.all(Array.from({ length: 6 }, () => runCli(env, 'jobs:list')));
    for (const run of runs) {
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
    }
    const client = new pg.Client({ connectionString: db.env.DATABASE_URL });
    await client.connect();
    try {
      const { rows } = await client.query<{ name: string }>(`SELECT name FROM pgboss.queue WHERE name NOT LIKE '\\_\\_%' ORDER BY name`);
      expect(rows.map((r) => r.name)).toEqual([
        'account-mail',
        'event-notices',
        'oidc-backchannel-logout',
        'registration-notices',
        'security-notices',
        'webhook-attempt',
        'webhook-fan-out',
        'webhook-notices',
      ]);
    } finally {
      await client.end();
    }
  });
});
