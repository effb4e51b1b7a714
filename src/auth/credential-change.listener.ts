import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { InjectDataSource } from '@nestjs/typeorm';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { DATABASE_TARGET } from '../database/database.module.js';
import type { DatabaseTarget } from '../database/database-target.js';
import type { InProcessNotifications } from '../database/listening-pglite.js';
import { CredentialCache } from './credential-cache.js';

export const CREDENTIAL_CHANNEL = 'agora_credentials';
/** Where instances answer a revocation barrier: `<nonce>:<listener backend pid>`. */
export const ACK_CHANNEL = 'agora_credentials_ack';
export const LISTENER_APPLICATION_NAME = 'agora-credential-listener';
const BARRIER_PREFIX = 'barrier:';
/** A notification this instance sends itself through the serving pool, to prove the listener hears what others send. */
const PROBE_PREFIX = 'probe:';

/**
 * The longest a revocation waits for other instances, and the longest an instance trusts its cache
 * without having confirmed that it has heard every notification sent: these two are one number so that
 * a revoke that has answered can never be followed by a cached acceptance anywhere.
 */
export const REVOCATION_BOUND_MS = 2_000;
const HEARTBEAT_MS = 500;
const RECONNECT_DELAY_MS = 1_000;
/**
 * How long an instance stays ready (/readyz) while its listener is not listening: a blip (the listener
 * reconnects within a second or two) takes no instance out of the load balancer; a listener that cannot
 * listen (a pooler in transaction mode, a database that refuses it) does.
 */
export const LISTENER_READINESS_GRACE_MS = 10_000;
/** How often a listening connection proves again that notifications sent through another connection reach it. */
const DELIVERY_PROOF_INTERVAL_MS = 30_000;

interface PendingBarrier {
  waiting: Set<number>;
  done: () => void;
}

/**
 * Listens on PostgreSQL's `agora_credentials` channel, fed by triggers on every change to a credential
 * or its user, and evicts those entries from this instance's credential cache. While not listening,
 * the cache is suspended, so a missed notification can never leave a revoked token usable.
 *
 * Revocation is immediate across instances: after revoking, `barrier()` sends a marker on the channel
 * and waits until every listening instance has acknowledged it. Notifications arrive in commit order,
 * so an instance that acknowledges has already evicted the credential. An instance that does not answer
 * within REVOCATION_BOUND_MS has by then stopped trusting its cache: each instance confirms every
 * HEARTBEAT_MS that its connection still delivers (a notification committed before a query started
 * arrives before that query's result), and serves cached entries only until REVOCATION_BOUND_MS after
 * the start of its last confirmed heartbeat.
 *
 * The listener connects through the session connection (DATABASE_DIRECT_URL when set): LISTEN belongs to
 * one server session, and a pooler in transaction mode would leave it on a server session that the
 * pooler no longer links to this client, and whose notifications it drops. So the cache is trusted only
 * once the connection has proved that it hears: after LISTEN, and again every DELIVERY_PROOF_INTERVAL_MS,
 * the instance sends itself a notification through the serving pool (another connection, as every
 * other instance's) and waits for it on the listening one. Notifications arrive in commit order, so
 * one that arrives proves every earlier one has. A proof that fails is logged as an error, and the
 * listener reconnects; the cache stays suspended, and after LISTENER_READINESS_GRACE_MS so does
 * readiness. Between proofs, every heartbeat also checks that it is answered by the server process that
 * ran LISTEN.
 *
 * On the embedded database there is one instance, the process that holds it, and no connection to
 * lose: the same triggers' notifications are taken from the output of whichever client committed them
 * (ListeningPGlite), and evicted before that client hears that its transaction committed.
 */
@Injectable()
export class CredentialChangeListener implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(CredentialChangeListener.name);
  private client?: pg.Client;
  /** The listening connection's backend pid, which names this instance in acknowledgements. */
  private pid = 0;
  private stopped = false;
  private retry?: NodeJS.Timeout;
  private heartbeat?: NodeJS.Timeout;
  private confirming = false;
  private readonly barriers = new Map<string, PendingBarrier>();
  /** Since when a listener that should listen has not been (start-up counts), or undefined while it listens. */
  private notListeningSince: number | undefined = performance.now();
  private sharedSessionLogged = false;
  private lastProof = 0;
  private readonly probes = new Map<string, () => void>();
  /** Other channels heard on the same connection (`hear`), with what each does with a notification. */
  private readonly channels = new Map<string, (payload: string) => void>();
  private readonly announcing = new Map<string, 'sending' | 'again'>();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly cache: CredentialCache,
    @Inject(DATABASE_TARGET) private readonly target: DatabaseTarget,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Whether this instance should take requests as far as revocation goes (/readyz): the listener listens,
   * or has been listening and is not listening for less than LISTENER_READINESS_GRACE_MS. Always true
   * where no listener is needed (the embedded database, no credential cache).
   */
  ready(): boolean {
    if (this.target.kind !== 'server' || !this.cache.configured) return true;
    if (this.notListeningSince === undefined) return true;
    return this.everListened && performance.now() - this.notListeningSince < LISTENER_READINESS_GRACE_MS;
  }

  private everListened = false;

  /**
   * Also hears `channel` on this instance's listening connection, from the other instances (its own
   * announcements are not handed back). To be called before the application boots; heard only where
   * this listener listens: on a PostgreSQL server, with the credential cache on.
   */
  hear(channel: string, handler: (payload: string) => void): void {
    if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`Not a plain channel name: ${channel}`);
    this.channels.set(channel, handler);
  }

  /**
   * Tells the other instances' listeners on `channel`, through the listening connection (no statement on
   * the serving pool, no connection more), without waiting: what is announced is a hint for their caches,
   * whose own bound holds if it is lost. Announcements made while one is on its way go as one more.
   */
  announce(channel: string): void {
    const client = this.client;
    if (!client) return;
    if (this.announcing.has(channel)) return void this.announcing.set(channel, 'again');
    this.announcing.set(channel, 'sending');
    void client
      .query('SELECT pg_notify($1, $2)', [channel, String(this.pid)])
      .catch(() => undefined)
      .then(() => {
        const again = this.announcing.get(channel) === 'again';
        this.announcing.delete(channel);
        if (again) this.announce(channel);
      });
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.cache.enabled) return;
    this.cache.suspend();
    if (this.target.notifications) await this.listenInProcess(this.target.notifications);
    else await this.connect();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    clearInterval(this.heartbeat);
    for (const barrier of this.barriers.values()) barrier.done();
    await this.client?.end().catch(() => undefined);
  }

  /**
   * Resolves once no instance will accept a credential whose revocation committed before the call:
   * every listening instance has acknowledged, or REVOCATION_BOUND_MS has passed. Never throws: the
   * revocation itself has already happened, and what cannot be confirmed is waited out.
   */
  async barrier(): Promise<void> {
    // The embedded database has one process that caches, and it evicts before the revoking client is
    // answered (see listenInProcess); with AUTH_CACHE_TTL_SECONDS=0 no instance caches: nothing to wait for.
    if (this.target.kind !== 'server' || !this.cache.configured) return;
    const client = this.client;
    if (!client) return void (await sleep(REVOCATION_BOUND_MS));
    const nonce = randomUUID();
    let timer: NodeJS.Timeout | undefined;
    try {
      // A listener trusts its cache at most REVOCATION_BOUND_MS past the start of its last heartbeat or
      // proof, each of which runs a statement on its connection first: one idle for longer (with a second
      // of margin) trusts it no more, and is not waited for (nor a stale session a pooler may hold under that name).
      const { rows } = await client.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()
           AND state_change > now() - make_interval(secs => $2)`,
        [LISTENER_APPLICATION_NAME, REVOCATION_BOUND_MS / 1000 + 1],
      );
      const waiting = new Set(rows.map((r) => r.pid));
      const acknowledged = new Promise<void>((resolve) => this.barriers.set(nonce, { waiting, done: resolve }));
      await client.query('SELECT pg_notify($1, $2)', [CREDENTIAL_CHANNEL, `${BARRIER_PREFIX}${nonce}`]);
      await Promise.race([acknowledged, new Promise((resolve) => (timer = setTimeout(resolve, REVOCATION_BOUND_MS)))]);
    } catch (err) {
      this.logger.warn(`Could not confirm a revocation with other instances (${(err as Error).message}); waiting out the bound instead`);
      await sleep(REVOCATION_BOUND_MS);
    } finally {
      clearTimeout(timer);
      this.barriers.delete(nonce);
    }
  }

  /**
   * The embedded database held by this process: a notification is heard before the client whose commit
   * sent it (this process, the CLI, an operator's psql) receives any answer, so an eviction has always
   * happened by the time a revocation returns. The cache is off while listening is not assured.
   */
  private async listenInProcess(notifications: InProcessNotifications): Promise<void> {
    await notifications.subscribe(CREDENTIAL_CHANNEL, {
      notified: (payload) => this.evict(payload),
      interrupted: (cause, routine) => {
        const message = `Change notifications may be missed or late (${cause}); credential cache off until they are heard again`;
        if (routine) this.logger.debug(message);
        else this.logger.warn(message);
        this.cache.suspend();
      },
      listening: () => this.cache.resume(),
    });
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.target.sessionConnection.url,
      application_name: LISTENER_APPLICATION_NAME,
      // Every wait is bounded: a link that drops packets ends in a reconnection, never in a listener
      // that waits for ever (a heartbeat unanswered past the bound means the cache is untrusted anyway).
      connectionTimeoutMillis: this.config.database.connectTimeoutMs,
      keepAlive: true,
      keepAliveInitialDelayMillis: this.config.database.keepAliveMs,
      query_timeout: REVOCATION_BOUND_MS,
    });
    client.on('notification', (message) => this.received(client, message.channel, message.payload ?? ''));
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      // One simple query: even through a pooler in transaction mode, the pid is that of the session that listens.
      const listens = [CREDENTIAL_CHANNEL, ACK_CHANNEL, ...this.channels.keys()].map((channel) => `LISTEN ${channel}; `).join('');
      const results = (await client.query(`${listens}SELECT pg_backend_pid() AS pid`)) as unknown as pg.QueryResult<{ pid: number }>[];
      this.pid = results.at(-1)!.rows[0]!.pid;
      const started = performance.now();
      if (!(await this.proveDelivery(client))) return;
      this.client = client;
      this.everListened = true;
      this.notListeningSince = undefined;
      this.cache.trustUntil(started + REVOCATION_BOUND_MS);
      this.cache.resume();
      this.heartbeat = setInterval(() => void this.confirm(client), HEARTBEAT_MS);
      this.heartbeat.unref();
    } catch (err) {
      this.lost(client, err as Error);
    }
  }

  /**
   * Sends this instance a notification through the serving pool and waits for it on `client`. False (the
   * connection given up, with an error logged) when it does not arrive within REVOCATION_BOUND_MS; a
   * failure to send throws (the database, not the listener, is what failed).
   */
  private async proveDelivery(client: pg.Client): Promise<boolean> {
    // A statement on the listening connection first: the barrier sees it active (pg_stat_activity) for as long as this proof may extend trust.
    const { pid } = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!;
    if (pid !== this.pid) {
      this.notHeard(client, pid);
      return false;
    }
    const nonce = randomUUID();
    let timer: NodeJS.Timeout | undefined;
    const heard = new Promise<boolean>((resolve) => {
      this.probes.set(nonce, () => resolve(true));
      timer = setTimeout(() => resolve(false), REVOCATION_BOUND_MS);
    });
    try {
      await this.dataSource.query('SELECT pg_notify($1, $2)', [CREDENTIAL_CHANNEL, `${PROBE_PREFIX}${nonce}`]);
      if (await heard) {
        this.lastProof = performance.now();
        return true;
      }
    } finally {
      clearTimeout(timer);
      this.probes.delete(nonce);
    }
    this.notHeard(client);
    return false;
  }

  /** Every notification committed before `started` has been handled once the query returns. */
  private async confirm(client: pg.Client): Promise<void> {
    // One heartbeat at a time: behind an unanswered one, another would only queue.
    if (this.confirming) return;
    this.confirming = true;
    const started = performance.now();
    try {
      if (started - this.lastProof >= DELIVERY_PROOF_INTERVAL_MS) {
        if (!(await this.proveDelivery(client))) return;
      } else {
        const { pid } = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!;
        if (this.client !== client) return;
        if (pid !== this.pid) return this.notHeard(client, pid);
      }
      if (this.client === client) this.cache.trustUntil(started + REVOCATION_BOUND_MS);
    } catch (err) {
      // A lost connection: the client's 'error' or 'end' handler suspends the cache and reconnects. An
      // unanswered heartbeat (query_timeout) ends nothing by itself: this connection is given up here.
      if ((err as Error).message === 'Query read timeout') this.lost(client, err as Error);
    } finally {
      this.confirming = false;
    }
  }

  /**
   * A notification sent through the serving pool did not arrive, or a heartbeat was answered by another
   * server process than the one that ran LISTEN (`pid`): the connection is a pooler's in transaction
   * mode, and notifications go to a session it no longer reaches. Logged once as an error (readiness
   * says the rest), and the listener reconnects, to prove itself again before the cache is trusted.
   */
  private notHeard(client: pg.Client, pid?: number): void {
    const what =
      pid === undefined
        ? `a notification sent through DATABASE_URL was not heard on the credential listener's connection within ${REVOCATION_BOUND_MS / 1000} s`
        : `the credential listener's connection changed server session (process ${this.pid}, then ${pid})`;
    const message =
      `Revocations may not reach this instance: ${what}. The listener's connection (DATABASE_DIRECT_URL, else DATABASE_URL) must be a ` +
      'session of its own, not a pooler in transaction mode, where LISTEN is lost (docs/deploy.md); credential cache off, reconnecting';
    if (!this.sharedSessionLogged) this.logger.error(message);
    else this.logger.debug(message);
    this.sharedSessionLogged = true;
    this.lost(client);
  }

  private lost(client: pg.Client, err?: Error): void {
    this.cache.suspend();
    this.notListeningSince ??= performance.now();
    if (this.client === client) {
      this.client = undefined;
      clearInterval(this.heartbeat);
    }
    if (this.stopped || this.retry) return;
    if (err) this.logger.warn(`Credential change notifications lost (${err.message}); credential cache off until reconnected`);
    client.removeAllListeners();
    client.on('error', () => undefined);
    void client.end().catch(() => undefined);
    this.retry = setTimeout(() => {
      this.retry = undefined;
      void this.connect();
    }, RECONNECT_DELAY_MS);
  }

  private received(client: pg.Client, channel: string, payload: string): void {
    if (channel === ACK_CHANNEL) return this.acknowledged(payload);
    const heard = this.channels.get(channel);
    if (heard) return payload === String(this.pid) ? undefined : heard(payload);
    // Another instance's probes are for it alone.
    if (payload.startsWith(PROBE_PREFIX)) return this.probes.get(payload.slice(PROBE_PREFIX.length))?.();
    if (payload.startsWith(BARRIER_PREFIX)) {
      // Everything committed before the marker has been evicted by now: say so.
      const nonce = payload.slice(BARRIER_PREFIX.length);
      void client.query('SELECT pg_notify($1, $2)', [ACK_CHANNEL, `${nonce}:${this.pid}`]).catch(() => undefined);
      return;
    }
    this.evict(payload);
  }

  /** `<table>:<id>`, as the triggers send it. */
  private evict(payload: string): void {
    const [table, id] = payload.split(':');
    if (!id) return this.cache.clear();
    if (table === 'users') this.cache.forgetUser(id);
    else this.cache.forgetCredential(id);
  }

  private acknowledged(payload: string): void {
    const separator = payload.lastIndexOf(':');
    const barrier = this.barriers.get(payload.slice(0, separator));
    if (!barrier) return;
    barrier.waiting.delete(Number(payload.slice(separator + 1)));
    if (barrier.waiting.size === 0) barrier.done();
  }
}
