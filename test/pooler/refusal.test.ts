import { FLEET_SECRET_KEY, ScratchDatabase } from '../fleet/fleet.js';
import { startServer } from '../support/processes.js';
import { freePort } from '../support/test-app.js';
import { PgBouncer } from './pgbouncer.js';
import { keepBusy, migrate, poolerDatabase, startBouncers } from './pooler.js';

// What Agora cannot be correct on, it refuses at start-up with one line saying what to set
// (docs/deploy.md): a transaction pooler it was not told about, a "direct" connection that is pooled
// per transaction, a statement pooler, a direct connection to another database.

/** Long enough for the start-up checks (the notification check waits up to 5 s) on a busy machine. */
const START_BOUND_MS = 45_000;

interface StartUp {
  /** The exit code, or 'ready' when the server started and answered /readyz 200 (then it was stopped). */
  outcome: number | null | 'ready' | 'still starting';
  output: string;
  /** The log lines at level error or fatal. */
  problems: { level: number; msg: string; err?: unknown }[];
}

/** Starts a server with these database settings and waits until it exits or is ready. */
async function startUp(env: Record<string, string>): Promise<StartUp> {
  const port = await freePort();
  const server = startServer({ ...env, SECRET_KEY: FLEET_SECRET_KEY, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'info' });
  const deadline = Date.now() + START_BOUND_MS;
  let outcome: StartUp['outcome'] = 'still starting';
  let exitCode: number | null | undefined;
  const exited = server.exited.then((code) => (exitCode = code));
  while (exitCode === undefined && outcome === 'still starting' && Date.now() < deadline) {
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) outcome = 'ready';
    else await new Promise((r) => setTimeout(r, 100));
  }
  const exitedByItself = exitCode !== undefined;
  if (server.child.exitCode === null) server.child.kill('SIGTERM');
  await exited;
  if (outcome === 'still starting' && exitedByItself) outcome = exitCode!;
  const output = server.output();
  const problems = output
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as StartUp['problems'][number])
    .filter((l) => l.level >= 50);
  return { outcome, output, problems };
}

/** Exit status 1 after one fatal line, `Cannot start: …`, matching `pattern`, with no stack trace. */
function expectRefused(started: StartUp, pattern: RegExp): void {
  expect({ outcome: started.outcome, problems: started.problems.map((p) => p.msg) }).toEqual({
    outcome: 1,
    problems: [expect.stringMatching(pattern)],
  });
  expect(started.problems[0]!.err).toBeUndefined();
  expect(started.output).not.toMatch(/\bat .*\.js:\d+/);
}

let db: ScratchDatabase;
let other: ScratchDatabase;
let transaction: PgBouncer;
let statement: PgBouncer;

beforeAll(async () => {
  [db, other] = await Promise.all([poolerDatabase(), poolerDatabase()]);
  [transaction, statement] = await startBouncers('transaction', 'statement');
  await migrate(db);
});

afterAll(async () => {
  await Promise.all([transaction?.stop(), statement?.stop()]);
  await Promise.all([db?.drop(), other?.drop()]);
});

describe('start-up refusal where a pooling mode is not supported or not declared', () => {
  it('refuses DATABASE_URL through a transaction pooler when DATABASE_POOLING is not set, saying to set it', async () => {
    expectRefused(
      await startUp({ DATABASE_URL: transaction.url(db.name) }),
      /^Cannot start: DATABASE_URL \(.*\) goes through a pooler in transaction mode.*DATABASE_POOLING=transaction.*DATABASE_DIRECT_URL/,
    );
  });

  it('refuses it with DATABASE_POOLING=session too', async () => {
    expectRefused(
      await startUp({ DATABASE_URL: transaction.url(db.name), DATABASE_POOLING: 'session' }),
      /^Cannot start: DATABASE_URL \(.*\) goes through a pooler in transaction mode.*DATABASE_POOLING=transaction/,
    );
  });

  it('refuses it while other clients keep the pooler busy (server connections moving from client to client)', async () => {
    const traffic = keepBusy(transaction, db.name, 4);
    try {
      expectRefused(
        await startUp({ DATABASE_URL: transaction.url(db.name) }),
        /^Cannot start: DATABASE_URL \(.*\) goes through a pooler in transaction mode.*DATABASE_POOLING=transaction/,
      );
    } finally {
      await traffic.stop();
    }
  });

  it('takes DATABASE_POOLING=transaction without DATABASE_DIRECT_URL as a configuration error naming DATABASE_DIRECT_URL', async () => {
    const started = await startUp({ DATABASE_URL: transaction.url(db.name), DATABASE_POOLING: 'transaction' });
    expect(started.outcome).toBe(1);
    expect(started.output).toMatch(/DATABASE_DIRECT_URL/);
    expect(started.output).not.toMatch(/\bat .*\.js:\d+/);
  });

  it('refuses a DATABASE_DIRECT_URL that goes through the transaction pooler as well', async () => {
    expectRefused(
      await startUp({
        DATABASE_URL: transaction.url(db.name),
        DATABASE_POOLING: 'transaction',
        DATABASE_DIRECT_URL: transaction.url(db.name),
      }),
      /^Cannot start: DATABASE_DIRECT_URL \(.*\) goes through a pooler in transaction mode/,
    );
  });

  it('refuses a pooler in statement mode, whatever DATABASE_POOLING says', async () => {
    const refusal = /^Cannot start: DATABASE_URL \(.*\) cannot run a transaction.*statement mode.*(session|transaction)/;
    expectRefused(await startUp({ DATABASE_URL: statement.url(db.name) }), refusal);
    expectRefused(
      await startUp({ DATABASE_URL: statement.url(db.name), DATABASE_POOLING: 'transaction', DATABASE_DIRECT_URL: db.url }),
      refusal,
    );
  });

  it('refuses a DATABASE_DIRECT_URL to another database than DATABASE_URL', async () => {
    expectRefused(
      await startUp({ DATABASE_URL: transaction.url(db.name), DATABASE_POOLING: 'transaction', DATABASE_DIRECT_URL: other.url }),
      /^Cannot start: DATABASE_DIRECT_URL \(.*\) and DATABASE_URL \(.*\) do not reach the same database/,
    );
  });

  it('does not show the password of a URL in the refusal', async () => {
    const url = new URL(transaction.url(db.name));
    url.password = 'pooler-secret-Zx81';
    const started = await startUp({ DATABASE_URL: url.toString() });
    expect(started.outcome).toBe(1);
    expect(started.output).not.toContain('pooler-secret-Zx81');
  });
});
