import { childrenOf, ServerProcess, startServer, waitForHttp, waitForOutput } from '../support/processes.js';
import {
  confirmationsTo,
  insertPeople,
  localTcpPorts,
  noticeJobStates,
  organizerWithEvents,
  Person,
  register,
  waitUntil,
} from '../support/mail-flows.js';
import { startSmtpServer, TestSmtpServer } from '../support/smtp-server.js';
import { freePort } from '../support/test-app.js';
import { FLEET_SECRET_KEY, requireAdminUrl, scratchDatabase, ScratchDatabase, startFleet } from './fleet.js';

// Mail sent from jobs by real server processes on PostgreSQL (issue 26's fault tests): a process killed
// in the middle of a send or right after the commit, and two instances of two workers each sending one
// batch. The confirmation arrives, once, whatever happens to the process that had it.

const MAIL_DOMAIN = 'fleet-mail.test';

/** The Message-ID of a job's mail (NoticeSender: the job's id at MAIL_FROM's domain). */
const messageIdOf = (jobId: string) => `<${jobId}@${MAIL_DOMAIN}>`;

function mailEnv(db: ScratchDatabase, smtp: TestSmtpServer): Record<string, string> {
  return {
    DATABASE_URL: db.url,
    SECRET_KEY: FLEET_SECRET_KEY,
    SMTP_URL: smtp.url,
    MAIL_FROM: `Agora <agora@${MAIL_DOMAIN}>`,
    JOBS_RETRY_DELAY_SECONDS: '1',
    DATABASE_POOL_SIZE: '4',
    LOG_LEVEL: 'info',
  };
}

async function confirmationJob(db: ScratchDatabase, registrationId: string): Promise<{ id: string; state: string; retry_count: number }> {
  const [job] = await db.query<{ id: string; state: string; retry_count: number }>(
    `SELECT id, state::text AS state, retry_count FROM pgboss.job
      WHERE name = 'registration-notices' AND data->>'message' = 'registration.confirmed' AND data->>'registrationId' = $1`,
    [registrationId],
  );
  if (!job) throw new Error(`no confirmation job for registration ${registrationId}`);
  return job;
}

describe('a server process killed (SIGKILL) with a confirmation committed but not sent', () => {
  let db: ScratchDatabase;
  let smtp: TestSmtpServer;
  const servers: ServerProcess[] = [];

  beforeAll(async () => {
    db = await scratchDatabase(requireAdminUrl(), 'agora_faults_mail');
    smtp = await startSmtpServer();
  });
  afterAll(async () => {
    for (const server of servers) if (server.child.exitCode === null) server.child.kill('SIGKILL');
    await Promise.all(servers.map((s) => s.exited));
    await smtp?.close();
    await db?.drop();
  });

  async function start(extra: Record<string, string> = {}): Promise<{ server: ServerProcess; url: string }> {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const server = startServer({ ...mailEnv(db, smtp), HOST: '127.0.0.1', PORT: String(port), BASE_URL: url, ...extra });
    servers.push(server);
    await waitForHttp(`${url}/readyz`, server, 120_000);
    return { server, url };
  }

  it('sends it after a restart, once: the attempt that hung in DATA (taken as dead) and the job never attempted', async () => {
    // One job at a time in the first process: while the first mail hangs, the second waits its turn.
    const first = await start({ JOBS_CONCURRENCY: '1' });
    const [owner, ann, bob] = (await insertPeople(db.query, 3)) as [Person, Person, Person];
    const [event] = await organizerWithEvents(first.url, owner, 1);

    smtp.stallNext(1);
    const annRegistration = await register(first.url, ann, event!);
    // Ann's mail went out whole and the server never answered: the attempt is under way.
    await waitUntil(
      () => smtp.held() === 1,
      20_000,
      () => `held ${smtp.held()}`,
    );
    const bobRegistration = await register(first.url, bob, event!);
    expect(await confirmationJob(db, annRegistration)).toMatchObject({ state: 'active', retry_count: 0 });
    expect(await confirmationJob(db, bobRegistration)).toMatchObject({ state: 'created' });

    first.server.child.kill('SIGKILL');
    expect(await first.server.exited).toBeNull();
    // Bob's was committed with his registration and never taken: killed "right after the commit".
    expect(await confirmationJob(db, bobRegistration)).toMatchObject({ state: 'created', retry_count: 0 });
    expect(confirmationsTo(smtp, ann.email)).toHaveLength(0);
    await waitUntil(
      () => smtp.pending() === 0,
      5_000,
      () => 'the killed process’s SMTP connection is still open',
    );

    const restartedAt = Date.now();
    const second = await start();
    const arrivedAfter: Record<string, number> = {};
    await waitUntil(
      () => {
        for (const person of [ann, bob])
          if (arrivedAfter[person.email] === undefined && confirmationsTo(smtp, person.email).length > 0)
            arrivedAfter[person.email] = Date.now() - restartedAt;
        return Object.keys(arrivedAfter).length === 2;
      },
      60_000,
      () => `arrived: ${JSON.stringify(arrivedAfter)}\n${second.server.output().slice(-3000)}`,
    );
    console.log(`after SIGKILL: confirmations arrived ${JSON.stringify(arrivedAfter)} ms after the restart`);
    expect(arrivedAfter[ann.email]).toBeLessThan(60_000);
    // Never attempted: taken as soon as the new process polls, no expiry to wait for.
    expect(arrivedAfter[bob.email]).toBeLessThan(20_000);

    // Both jobs are done: nothing can send them again. Each mail arrived once, with its job's Message-ID.
    await waitUntil(
      async () => (await noticeJobStates(db.query, [annRegistration, bobRegistration])).completed === 2,
      10_000,
      () => 'the jobs are not completed',
    );
    const annJob = await confirmationJob(db, annRegistration);
    const bobJob = await confirmationJob(db, bobRegistration);
    // Ann's: the hung attempt, then the one after the restart. Bob's: one attempt.
    expect(annJob.retry_count).toBe(1);
    expect(bobJob.retry_count).toBe(0);
    for (const [person, job] of [
      [ann, annJob],
      [bob, bobJob],
    ] as const) {
      const mails = confirmationsTo(smtp, person.email);
      expect(mails.map((m) => m.messageId)).toEqual([messageIdOf(job.id)]);
      expect(smtp.arrivals.filter((a) => a.mail.messageId === messageIdOf(job.id))).toHaveLength(1);
    }
    expect(smtp.held()).toBe(1);

    second.server.child.kill('SIGTERM');
    expect(await second.server.exited).toBe(0);
  }, 90_000);
});

describe('two instances of WORKERS=2 on one database, one SMTP server', () => {
  let db: ScratchDatabase;
  let smtp: TestSmtpServer;
  let stop: (() => Promise<(number | null)[]>) | undefined;

  beforeAll(async () => {
    db = await scratchDatabase(requireAdminUrl(), 'agora_faults_mail');
    smtp = await startSmtpServer();
  });
  afterAll(async () => {
    await stop?.();
    await smtp?.close();
    await db?.drop();
  });

  it('sends each of 60 confirmations exactly once, none missing, from more than one process', async () => {
    const fleet = await startFleet(db.url, 2, { ...mailEnv(db, smtp), WORKERS: '2' });
    stop = fleet.stop;
    for (const instance of fleet.instances) await waitForOutput(instance.server, /"msg":"Started 2 workers/, 60_000);
    const workers = fleet.instances.flatMap((instance) => childrenOf(instance.server.child.pid!));
    expect(workers).toHaveLength(4);

    const [owner, ...people] = await insertPeople(db.query, 61);
    const events = await organizerWithEvents(fleet.instances[0]!.url, owner!, 6);
    // A slow server: sends overlap, and each process has some in flight at once.
    smtp.answerAfter(50);
    const registrations: string[] = [];
    for (let i = 0; i < people.length; i += 10) {
      registrations.push(
        ...(await Promise.all(
          people.slice(i, i + 10).map((person, j) => register(fleet.instances[(i + j) % 2]!.url, person, events[(i + j) % events.length]!)),
        )),
      );
    }

    // Which process holds the connection each mail came on (noted while the connections are open).
    const processOfPort = new Map<number, number>();
    await waitUntil(
      () => {
        for (const pid of workers) for (const port of localTcpPorts(pid)) processOfPort.set(port, pid);
        return people.every((person) => confirmationsTo(smtp, person.email).length > 0);
      },
      60_000,
      () => `${people.filter((p) => confirmationsTo(smtp, p.email).length === 0).length} of ${people.length} missing`,
    );
    await waitUntil(
      async () => {
        const states = await noticeJobStates(db.query, registrations);
        return Object.keys(states).join() === 'completed';
      },
      15_000,
      () => 'not every job completed',
    );

    const jobs = await db.query<{ id: string }>(
      `SELECT id FROM pgboss.job WHERE name = 'registration-notices' AND data->>'message' = 'registration.confirmed'`,
    );
    const confirmations = smtp.arrivals.filter((a) => /registered:/.test(a.mail.subject ?? ''));
    expect(people.map((person) => confirmationsTo(smtp, person.email).length)).toEqual(people.map(() => 1));
    expect(confirmations).toHaveLength(people.length);
    expect(jobs).toHaveLength(people.length);
    expect(confirmations.map((a) => a.mail.messageId).sort()).toEqual(jobs.map((job) => messageIdOf(job.id)).sort());

    const senders = new Set(confirmations.map((a) => processOfPort.get(a.remotePort)).filter((pid) => pid !== undefined));
    console.log(`60 confirmations sent by ${senders.size} of 4 worker processes`);
    expect(senders.size).toBeGreaterThanOrEqual(2);

    expect(await stop()).toEqual([0, 0]);
    stop = undefined;
  }, 90_000);
});
