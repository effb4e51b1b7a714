import { execSync } from 'node:child_process';
import { scratchDatabase, ScratchDatabase } from '../fleet/fleet.js';
import { confirmationsTo, insertPeople, noticeJobStates, organizerWithEvents, register, waitUntil } from '../support/mail-flows.js';
import { ServerProcess, startServer, waitForHttp } from '../support/processes.js';
import { startSmtpServer, TestSmtpServer } from '../support/smtp-server.js';
import { freePort } from '../support/test-app.js';

/**
 * The fault tier (see postgres-outage.test.ts): PostgreSQL stopped while the server sends a batch of
 * mails from jobs, then started again. A database of its own on the tier's cluster, dropped after.
 */
const { FAULT_DATABASE_URL: url, FAULT_PG_STOP: stopCommand, FAULT_PG_START: startCommand } = process.env;
const configured = url && stopCommand && startCommand;

const MAILS = 12;
const OUTAGE_MS = 6_000;
const MAIL_DOMAIN = 'fault-mail.test';

(configured ? describe : describe.skip)('PostgreSQL stopped while mail jobs run', () => {
  let db: ScratchDatabase;
  let smtp: TestSmtpServer;
  let server: ServerProcess;
  let base: string;

  beforeAll(async () => {
    db = await scratchDatabase(url!, 'agora_faults_outage');
    smtp = await startSmtpServer();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    server = startServer({
      DATABASE_URL: db.url,
      SECRET_KEY: 'fault-tier-secret-key-0123456789abcdef',
      DATABASE_CONNECT_TIMEOUT_SECONDS: '2',
      SMTP_URL: smtp.url,
      MAIL_FROM: `Agora <agora@${MAIL_DOMAIN}>`,
      JOBS_RETRY_DELAY_SECONDS: '1',
      PORT: String(port),
      HOST: '127.0.0.1',
      BASE_URL: base,
      LOG_LEVEL: 'info',
    });
    await waitForHttp(`${base}/readyz`, server, 120_000);
  }, 120_000);

  afterAll(async () => {
    try {
      execSync(startCommand!, { stdio: 'ignore' }); // in case the test stopped before starting it again
    } catch {
      // already running
    }
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    await smtp?.close();
    await db?.drop();
  });

  it('delivers every mail (a repeat only of one sent as the database went away), the process survives, nothing is left failed or stuck', async () => {
    const [owner, ...people] = await insertPeople(db.query, MAILS + 1);
    const events = await organizerWithEvents(base, owner!, 2);
    // A slow SMTP server (each mail answered 1 s after its data): the batch takes a while to send.
    smtp.answerAfter(1000);
    const registrations = await Promise.all(people.map((person, i) => register(base, person, events[i % 2]!)));

    // Stop PostgreSQL once some mails have gone and others are being sent.
    await waitUntil(
      () => smtp.arrivals.length >= 1 && smtp.pending() >= 1,
      30_000,
      () => `arrived ${smtp.arrivals.length}, in flight ${smtp.pending()}`,
    );
    const atStop = { arrived: smtp.arrivals.length, inFlight: smtp.pending() };
    execSync(stopCommand!, { stdio: 'ignore' });
    await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
    const duringOutage = smtp.arrivals.length;
    execSync(startCommand!, { stdio: 'ignore' });
    const restartedAt = Date.now();

    // Attempts cut off by the outage (their completion could not be written) are taken as dead after
    // the kind's expiry (30 s from their start) at the next maintenance (pg-boss: 10 to 20 s), and
    // retried: every job completes.
    await waitUntil(
      async () => {
        try {
          return (await noticeJobStates(db.query, registrations)).completed === MAILS;
        } catch {
          return false; // PostgreSQL still starting
        }
      },
      75_000,
      () => `arrived ${smtp.arrivals.length}\n${server.output().slice(-3000)}`,
    );
    const recoveredMs = Date.now() - restartedAt;
    expect(server.child.exitCode).toBeNull();
    expect((await fetch(`${base}/readyz`)).status).toBe(200);

    // None lost.
    const counts = people.map((person) => confirmationsTo(smtp, person.email).length);
    expect(counts.filter((n) => n === 0)).toEqual([]);

    // A second arrival is of the same job (same Message-ID: a mail system can tell the repeat), and
    // only of one that was attempted again: its first attempt delivered, and the database was gone
    // before the job could be marked done (at least once).
    const jobs = await db.query<{ id: string; registration: string; retry_count: number }>(
      `SELECT id, data->>'registrationId' AS registration, retry_count FROM pgboss.job
        WHERE name = 'registration-notices' AND data->>'message' = 'registration.confirmed'`,
    );
    expect(jobs).toHaveLength(MAILS);
    const repeated: string[] = [];
    for (const [i, person] of people.entries()) {
      const job = jobs.find((j) => j.registration === registrations[i])!;
      const ids = confirmationsTo(smtp, person.email).map((m) => m.messageId);
      expect(new Set(ids)).toEqual(new Set([`<${job.id}@${MAIL_DOMAIN}>`]));
      if (ids.length > 1) {
        expect(job.retry_count).toBeGreaterThanOrEqual(1);
        repeated.push(job.id);
      }
    }
    expect(repeated.length).toBeLessThanOrEqual(atStop.inFlight + (duringOutage - atStop.arrived));

    // Nothing failed, waiting or running in any queue (the reminders are scheduled for later, as planned).
    const states = await db.query<{ name: string; state: string; count: number; due: boolean }>(
      `SELECT name, state::text AS state, (start_after <= now()) AS due, count(*)::int AS count FROM pgboss.job GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
    );
    expect(
      states.filter((s) => s.state === 'failed' || s.state === 'active' || ((s.state === 'created' || s.state === 'retry') && s.due)),
    ).toEqual([]);
    console.log(
      `mail through an outage: ${JSON.stringify({ atStop, arrivedDuringOutage: duringOutage - atStop.arrived, recoveredMs, repeated: repeated.length, states })}`,
    );
  }, 120_000);
});
