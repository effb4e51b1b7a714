import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createTestDatabase, TestDatabase } from './support/database.js';
import { startServer, waitForHttp } from './support/processes.js';
import { freePort } from './support/test-app.js';

const embedded = !process.env.DATABASE_URL;

describe('the server process', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.drop());

  it('serves health checks, logs JSON with request ids, and stops cleanly on SIGTERM', async () => {
    const port = await freePort();
    const server = startServer({ ...db.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info' });
    try {
      await waitForHttp(`http://127.0.0.1:${port}/healthz`, server);
      const live = await fetch(`http://127.0.0.1:${port}/healthz`, { headers: { 'x-request-id': 'trace-abc-123' } });
      expect(await live.json()).toEqual({ status: 'ok' });
      expect(live.headers.get('x-request-id')).toBe('trace-abc-123');
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: 'ok', database: 'ok' });
      const forged = await fetch(`http://127.0.0.1:${port}/healthz`, { headers: { 'x-request-id': 'bad id\u00e9' } });
      expect(forged.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    } finally {
      server.child.kill('SIGTERM');
    }
    expect(await server.exited).toBe(0);
    const lines = server
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.some((l) => l.reqId === 'trace-abc-123')).toBe(true);
    expect(lines.some((l) => l.msg === 'Stopped')).toBe(true);
    if (embedded) expect(existsSync(join(db.env.DATA_DIR!, 'agora.lock'))).toBe(false);
  });

  (embedded ? it : it.skip)('refuses to open an embedded database that another server has open', async () => {
    const port = await freePort();
    const first = startServer({ ...db.env, PORT: String(port), HOST: '127.0.0.1' });
    try {
      await waitForHttp(`http://127.0.0.1:${port}/healthz`, first);
      const second = startServer({ ...db.env, PORT: String(await freePort()), HOST: '127.0.0.1' });
      expect(await second.exited).toBe(1);
      expect(second.output()).toMatch(/already open by process \d+/);
      expect(second.output()).toMatch(/DATABASE_URL/);
      expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
    } finally {
      first.child.kill('SIGTERM');
      await first.exited;
    }
  });

  it.each([
    [{ PORT: 'abc' }, /PORT: must be a number/],
    [{ PORT: '70000' }, /PORT: must be between 0 and 65535/],
    [{ BASE_URL: 'not a url' }, /BASE_URL: must be an absolute http\(s\) URL/],
    [{ DATABASE_URL: 'mysql://localhost/x' }, /DATABASE_URL: must be a postgres:\/\//],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL/],
    [{ MIGRATIONS_RUN: 'maybe' }, /MIGRATIONS_RUN: must be true or false/],
  ])('stops at start-up with a message naming the bad setting %j', async (env, message) => {
    const server = startServer({ ...db.env, ...env });
    expect(await server.exited).toBe(1);
    expect(server.output()).toMatch(message);
  });

  it('stops at start-up with a clear message when the database cannot be reached', async () => {
    const server = startServer({
      DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/nowhere`,
      DATABASE_CONNECT_TIMEOUT_SECONDS: '3',
    });
    expect(await server.exited).toBe(1);
    expect(server.output()).toMatch(/Cannot reach the database \(postgres:\/\/postgres@127\.0\.0\.1:\d+\/nowhere\)/);
  });
});
