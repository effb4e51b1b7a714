import { graphql } from './support/http.js';
import { runCli } from './support/processes.js';
import { startTestApp, TestApp } from './support/test-app.js';
import { TEST_SECRET_KEY } from './support/test-app.js';

describe('npm run cli -- seed:demo', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it("fills a demo a newcomer's first events query finds, once", async () => {
    const env = { ...t.databaseEnv, SECRET_KEY: TEST_SECRET_KEY };
    const seeded = await runCli(env, 'seed:demo', '--password', 'demo-password-123');
    expect(seeded.stderr).toBe('');
    expect(seeded.json).toMatchObject({
      seeded: true,
      organizers: ['demo-paris-rust', 'demo-global-devs'],
      events: 8,
      password: 'demo-password-123',
    });

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

    // The small Paris event is full, with people waiting.
    const full = await graphql(t.url, '{ events(first: 1, filter: { search: "async in practice" }) { nodes { capacity spotsLeft } } }');
    expect(full.body.data?.events.nodes).toEqual([{ capacity: 4, spotsLeft: 0 }]);

    const again = await runCli(env, 'seed:demo');
    expect(again.json).toEqual({ seeded: false, message: 'The demo data is already there; nothing was changed.' });
  }, 60_000);
});
