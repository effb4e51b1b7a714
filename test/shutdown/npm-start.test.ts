import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createTestDatabase, TestDatabase } from '../support/database.js';
import { childrenOf, commandLine, descendantsOf, startWithNpm, waitForHttp } from '../support/processes.js';
import { freePort, TEST_SECRET_KEY } from '../support/test-app.js';

const embedded = !process.env.DATABASE_URL;
const gone = (pid: number) => !commandLine(pid);

describe('npm start', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.drop());

  it("runs the server as npm's own child, so SIGTERM to npm's process drains and stops it", async () => {
    const port = await freePort();
    const npm = startWithNpm({ ...db.env, SECRET_KEY: TEST_SECRET_KEY, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info' });
    const started: number[] = [];
    try {
      await waitForHttp(`http://127.0.0.1:${port}/healthz`, npm);
      const tree = descendantsOf(npm.child.pid!);
      started.push(...tree);
      const tracked = tree.map((pid) => `${pid} ${commandLine(pid)}`).join('\n');
      const servers = tree.filter((pid) => /^(\S*\/)?node .*dist\/src\/main\.js$/.test(commandLine(pid) ?? ''));
      expect({ servers: servers.length, tree: tracked }).toEqual({ servers: 1, tree: expect.any(String) });
      // No shell between npm and the server: npm forwards SIGTERM to its child, and a shell would die of it.
      expect(childrenOf(npm.child.pid!)).toEqual(servers);

      process.kill(npm.child.pid!, 'SIGTERM');
      const code = await Promise.race([npm.exited, new Promise<'still running'>((r) => setTimeout(() => r('still running'), 15_000))]);
      expect(code).toBe(0);
      for (let i = 0; i < 50 && !gone(servers[0]!); i++) await new Promise((r) => setTimeout(r, 100));
      expect(gone(servers[0]!)).toBe(true);
      expect(npm.output()).toMatch(/"signal":"SIGTERM".*Shutting down/);
      expect(npm.output()).toMatch(/"msg":"Stopped"/);
      await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
      if (embedded) expect(existsSync(join(db.env.DATA_DIR!, 'agora.lock'))).toBe(false);
    } finally {
      for (const pid of started) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      npm.child.kill('SIGKILL');
    }
  });
});
