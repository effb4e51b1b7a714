import { createTestDatabase, TestDatabase } from '../support/database.js';
import { TEST_PASSWORD } from '../support/fixtures.js';
import { confirmationsTo, organizerWithEvents, Person, register, waitUntil } from '../support/mail-flows.js';
import { runCli, ServerProcess, startServer, waitForHttp } from '../support/processes.js';
import { startSmtpServer, TestSmtpServer } from '../support/smtp-server.js';
import { freePort, TEST_SECRET_KEY } from '../support/test-app.js';

// SIGTERM while a mail is being sent from a job: jobs stop being taken while HTTP drains; the one in
// flight either finishes within the drain or is failed, to be retried by the next process. The mail
// arrives once either way.

const MAIL_DOMAIN = 'shutdown-mail.test';

describe('SIGTERM with a mail in flight', () => {
  let db: TestDatabase;
  let smtp: TestSmtpServer;
  let env: Record<string, string>;
  let owner: Person;
  let people: Person[];
  const servers: ServerProcess[] = [];

  /** A user and a personal token, with the CLI (before any server runs: the embedded database has one owner at a time). */
  async function person(username: string): Promise<Person> {
    const created = await runCli(
      env,
      'users:create',
      '--username',
      username,
      '--email',
      `${username}@example.com`,
      '--name',
      username,
      '--password',
      TEST_PASSWORD,
    );
    expect(created.code).toBe(0);
    const token = await runCli(env, 'tokens:create', '--user', username, '--name', 'mail', '--scopes', 'api');
    expect(token.code).toBe(0);
    return { id: '', email: `${username}@example.com`, token: token.json.token as string };
  }

  beforeAll(async () => {
    db = await createTestDatabase();
    smtp = await startSmtpServer();
    env = { ...db.env, SECRET_KEY: TEST_SECRET_KEY };
    owner = await person('mail-owner');
    people = [await person('mail-ann'), await person('mail-bob')];
    // Six CLI processes, the first migrating a new embedded database: over a minute on a busy machine.
  }, 180_000);
  afterAll(async () => {
    for (const server of servers) if (server.child.exitCode === null) server.child.kill('SIGKILL');
    await Promise.all(servers.map((s) => s.exited));
    await smtp?.close();
    await db?.drop();
  });

  async function start(shutdownSeconds: number): Promise<{ server: ServerProcess; url: string }> {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const server = startServer({
      ...env,
      HOST: '127.0.0.1',
      PORT: String(port),
      BASE_URL: url,
      SMTP_URL: smtp.url,
      MAIL_FROM: `Agora <agora@${MAIL_DOMAIN}>`,
      JOBS_RETRY_DELAY_SECONDS: '1',
      SHUTDOWN_TIMEOUT_SECONDS: String(shutdownSeconds),
      LOG_LEVEL: 'info',
    });
    servers.push(server);
    await waitForHttp(`${url}/readyz`, server);
    // The CLI's tokens:create queued a security notice per person: let those go out first, so that the
    // mail held or delayed below is the registration's and no other.
    await waitUntil(
      () => smtp.arrivals.filter((a) => /personal access token was created/.test(a.mail.subject ?? '')).length === 3,
      20_000,
      () => `token notices arrived: ${smtp.arrivals.map((a) => a.mail.subject).join(' | ')}`,
    );
    return { server, url };
  }

  /** The confirmation job of the mail with this Message-ID, as `jobs:show` sees it (no server running). */
  async function jobOf(messageId: string): Promise<{ state: string; attempts: number }> {
    const id = /^<([0-9a-f-]{36})@/.exec(messageId)![1]!;
    const shown = await runCli(env, 'jobs:show', '--id', id);
    expect(shown.code).toBe(0);
    return shown.json as { state: string; attempts: number };
  }

  it('finishes a slow send (3 s) within the drain (8 s): sent once, the job completed', async () => {
    const { server, url } = await start(10);
    const [event] = await organizerWithEvents(url, owner, 1);
    smtp.answerAfter(3000);
    await register(url, people[0]!, event!);
    await waitUntil(
      () => smtp.pending() === 1,
      20_000,
      () => 'no mail in flight',
    );

    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    const mails = confirmationsTo(smtp, people[0]!.email);
    expect(mails).toHaveLength(1);
    expect(await jobOf(mails[0]!.messageId!)).toMatchObject({ state: 'completed', attempts: 1 });
    smtp.answerAfter(0);
  }, 60_000);

  it('leaves a send that outlasts the drain to be retried: the next process sends it, once', async () => {
    const first = await start(4);
    const [event] = await organizerWithEvents(first.url, owner, 1);
    smtp.stallNext(1);
    await register(first.url, people[1]!, event!);
    await waitUntil(
      () => smtp.held() === 1,
      20_000,
      () => 'no mail in flight',
    );

    first.server.child.kill('SIGTERM');
    expect(await first.server.exited).toBe(0);
    expect(confirmationsTo(smtp, people[1]!.email)).toHaveLength(0);

    const restartedAt = Date.now();
    const second = await start(10);
    await waitUntil(
      () => confirmationsTo(smtp, people[1]!.email).length > 0,
      15_000,
      () => second.server.output().slice(-2000),
    );
    const arrivedMs = Date.now() - restartedAt;
    // Failed at shutdown, so due again at once: no expiry to wait for.
    expect(arrivedMs).toBeLessThan(15_000);
    second.server.child.kill('SIGTERM');
    expect(await second.server.exited).toBe(0);

    const mails = confirmationsTo(smtp, people[1]!.email);
    expect(mails).toHaveLength(1);
    expect(await jobOf(mails[0]!.messageId!)).toMatchObject({ state: 'completed', attempts: 2 });
    expect(smtp.arrivals.filter((a) => a.mail.messageId === mails[0]!.messageId)).toHaveLength(1);
  }, 60_000);
});
