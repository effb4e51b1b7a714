import { PGlite } from '@electric-sql/pglite';
import { Logger } from '@nestjs/common';
import { ProtocolTap } from './protocol-tap.js';

/** Hears a channel's notifications in the process that holds the embedded database. */
export interface NotificationSubscriber {
  /** A notification, called before the client whose commit sent it receives any answer to that commit. */
  notified(payload: string): void;
  /**
   * Notifications may be missed or come late from now on, until `listening`: called once when that
   * starts, with what happened (`routine` when it is an expected, short pause rather than a problem).
   */
  interrupted(cause: string, routine: boolean): void;
  /** Every notification committed from now on will be heard. */
  listening(): void;
}

/** Change notifications of a database this process holds (the embedded one, not a server's). */
export interface InProcessNotifications {
  subscribe(channel: string, subscriber: NotificationSubscriber): Promise<void>;
}

type StreamOptions = Parameters<PGlite['execProtocolRawStream']>[1];

const QUERY = 0x51; // 'Q'
const PARSE = 0x50; // 'P'
const BIND = 0x42; // 'B'
const CLOSE = 0x43; // 'C'
const TERMINATE = 0x58; // 'X'
const STATEMENT = 0x53; // 'S', what a Close closes
/** The statements that end a session's LISTEN. DISCARD PLANS, TEMP and SEQUENCES do not. */
const ENDS_LISTEN = /\bUNLISTEN\b|\bDISCARD\b(?!\s+(?:PLANS|TEMP|TEMPORARY|SEQUENCES)\b)/i;
const EXECUTE = /\bEXECUTE\b/i;
const DEALLOCATE_ONE = /^\s*DEALLOCATE\s+(?:PREPARE\s+)?([a-z_][a-z0-9_$]*)\s*;?\s*$/i;

const LISTEN_LOST = 'a database client may have ended LISTEN (UNLISTEN or DISCARD ALL)';
const COMMIT_PENDING = "a client's COMMIT was answered before the session was idle again; its notifications come when it is";
const STREAM_LOST = 'the database output could not be followed';

/**
 * PGlite is one PostgreSQL backend: every socket client's statements run in its single session, and a
 * notification that a client's commit sends to a channel this session listens on is written into that
 * client's own output, just before its ReadyForQuery. PGlite's `listen()` callbacks never hear these
 * (the socket server reads the raw output, bypassing PGlite's parser). So this subclass reads the output
 * the socket server relays, takes out notifications on subscribed channels and hands them to their
 * subscriber synchronously, before the rest of that output (ReadyForQuery, the answer the client waits
 * for) is relayed. The clients, which never listened, never see them.
 *
 * PostgreSQL sends a session its own notifications only when it goes idle: a COMMIT answered while the
 * session is in a transaction again (`COMMIT; BEGIN` in one exchange) has its notifications still to
 * come, so the subscribers are interrupted until the session is next idle.
 *
 * LISTEN is a property of the shared session, so a client could end it (UNLISTEN, DISCARD ALL): a
 * message whose text names either, or that binds or EXECUTEs a prepared statement whose text did,
 * interrupts the subscribers before it runs, and LISTEN is issued again once the session is idle.
 * Text is all this can read: UNLISTEN run by a function or by dynamic SQL (`EXECUTE` in PL/pgSQL) goes
 * unnoticed (see docs/operations.md).
 */
export class ListeningPGlite extends PGlite implements InProcessNotifications {
  private readonly logger = new Logger(ListeningPGlite.name);
  private readonly subscribers = new Map<string, NotificationSubscriber>();
  private readonly tap = new ProtocolTap({
    notification: (channel, payload) => this.deliver(channel, payload),
    ready: (status) => this.guarded(() => this.readyForQuery(status)),
    complete: (tag) => this.guarded(() => this.completed(tag)),
    message: (type) => (this.closeCompleted ||= type === '3'),
  });
  /**
   * The last ReadyForQuery said idle. Not "no client is mid-exchange": the socket server runs another
   * connection's messages whenever the session is outside a transaction block, so a client may be
   * between its Parse and its Sync (inside an implicit transaction) when a statement of ours runs.
   */
  private idle = true;
  /** LISTEN must be issued (again) before notifications are heard. */
  private listenDue = false;
  /** A COMMIT has been answered since the session was last idle: its notifications may not have come yet. */
  private commitPending = false;
  /** Subscribers have been told `interrupted` and not yet `listening`. */
  private suspended = true;
  private listenFailureLogged = false;
  /** Prepared statements (by name, `''` the unnamed one) whose text could end LISTEN. */
  private readonly unlistening = new Set<string>();
  private closeCompleted = false;

  constructor(dataDir: string) {
    super(dataDir);
    // What this process runs on PGlite directly (the socket server's ROLLBACK of a departed client's
    // transaction) is answered through PGlite's own parser, which reports notifications here, from a
    // microtask queued while it parses (so after that statement, not during it).
    this.onNotification((channel, payload) => this.deliver(channel, payload));
  }

  async subscribe(channel: string, subscriber: NotificationSubscriber): Promise<void> {
    if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`Not a plain channel name: ${channel}`);
    this.subscribers.set(channel, subscriber);
    this.listenDue = true;
    await this.runExclusive(async () => {
      if (this.mayListen()) await this.listenAll();
    });
  }

  override async execProtocolRawStream(message: Uint8Array, options: StreamOptions): Promise<void> {
    const closing = this.inspect(message);
    if (message[0] !== TERMINATE) this.idle = false;
    this.closeCompleted = false;
    try {
      // Our checks run synchronously with the output, before any client's answer can be acted on here.
      await super.execProtocolRawStream(message, {
        ...options,
        syncToFs: false,
        onRawData: (data) => this.tap.feed(data, options.onRawData),
      });
    } finally {
      if (!this.tap.atMessageBoundary) {
        this.tap.reset();
        this.listenDue = true;
        this.interrupt(STREAM_LOST);
      }
    }
    if (closing !== undefined && this.closeCompleted) this.unlistening.delete(closing);
    // A COMMIT answered without a ReadyForQuery yet (a pipeline that continues, or waits for Sync).
    if (this.commitPending && !this.idle) this.interrupt(COMMIT_PENDING, true);
    if (options.syncToFs ?? true) await this.syncToFs();
    if (this.listenDue && this.mayListen()) await this.listenAll();
  }

  /** Interrupts the subscribers if `message` may end LISTEN; returns the statement a Close closes. */
  private inspect(message: Uint8Array): string | undefined {
    const bytes = Buffer.from(message.buffer, message.byteOffset, message.byteLength);
    const string = (at: number) => bytes.toString('utf8', at, Math.max(at, bytes.indexOf(0, at)));
    let endsListen = false;
    if (message[0] === QUERY) {
      const text = string(5);
      endsListen = this.mayEndListen(text);
      const deallocated = DEALLOCATE_ONE.exec(text)?.[1];
      if (deallocated) this.unlistening.delete(deallocated.toLowerCase());
    } else if (message[0] === PARSE) {
      const name = string(5);
      const text = string(5 + Buffer.byteLength(name) + 1);
      endsListen = this.mayEndListen(text);
      // A named statement cannot be parsed again under the same name, only the unnamed one is replaced.
      if (endsListen) this.unlistening.add(name);
      else if (name === '') this.unlistening.delete('');
    } else if (message[0] === BIND) {
      const portal = string(5);
      endsListen = this.unlistening.has(string(5 + Buffer.byteLength(portal) + 1));
    } else if (message[0] === CLOSE && message[5] === STATEMENT) return string(6);
    if (endsListen && this.subscribers.size > 0) {
      this.listenDue = true;
      this.interrupt(LISTEN_LOST);
    }
    return undefined;
  }

  private mayEndListen(text: string): boolean {
    if (ENDS_LISTEN.test(text)) return true;
    if (this.unlistening.size === 0 || !EXECUTE.test(text)) return false;
    const lower = text.toLowerCase();
    return [...this.unlistening].some((name) => name !== '' && lower.includes(name.toLowerCase()));
  }

  private readyForQuery(status: string): void {
    this.idle = status === 'I';
    if (!this.idle) {
      if (this.commitPending) this.interrupt(COMMIT_PENDING, true);
      return;
    }
    // Any notification of an earlier COMMIT came just before this ReadyForQuery.
    this.commitPending = false;
    this.resume();
  }

  private completed(tag: string): void {
    if (tag === 'DISCARD ALL' || tag === 'DEALLOCATE ALL') this.unlistening.clear();
    if (tag.startsWith('COMMIT')) this.commitPending = true;
  }

  /** A statement of ours runs in the shared session; it must not join a client's transaction block. */
  private mayListen(): boolean {
    return this.idle && !this.isInTransaction();
  }

  private deliver(channel: string, payload: string): boolean {
    const subscriber = this.subscribers.get(channel);
    if (!subscriber) return false;
    this.guarded(() => subscriber.notified(payload));
    return true;
  }

  /** Runs `callback`, called from PGlite's output callback inside wasm: nothing may be thrown through PostgreSQL's C stack. */
  private guarded(callback: () => void): void {
    try {
      callback();
    } catch (err) {
      this.logger.error(`Handling the embedded database's output failed: ${(err as Error).stack ?? String(err)}`);
      this.listenDue = true;
      try {
        this.interrupt(`handling a notification failed (${(err as Error).message})`);
      } catch {
        // Already logged; a subscriber that cannot even be interrupted has nothing more to be told.
      }
    }
  }

  private interrupt(cause: string, routine = false): void {
    if (this.suspended) return;
    this.suspended = true;
    for (const subscriber of this.subscribers.values()) subscriber.interrupted(cause, routine);
  }

  private resume(): void {
    if (!this.suspended || this.listenDue || this.commitPending || this.subscribers.size === 0) return;
    this.suspended = false;
    for (const subscriber of this.subscribers.values()) subscriber.listening();
  }

  /** Runs while the session is idle (inside the socket server's exclusive section). Never throws: the socket server would stop serving. */
  private async listenAll(): Promise<void> {
    const channels = [...this.subscribers.keys()];
    let status: string | undefined;
    let failed = false;
    const tap = new ProtocolTap({
      notification: (channel, payload) => this.deliver(channel, payload),
      ready: (s) => (status = s),
      message: (type) => (failed ||= type === 'E'),
    });
    try {
      await super.execProtocolRawStream(simpleQuery(channels.map((channel) => `LISTEN ${channel};`).join(' ')), {
        onRawData: (data) => tap.feed(data, () => undefined),
      });
    } catch (err) {
      this.listenFailed(`LISTEN threw: ${(err as Error).message}`);
      return;
    }
    if (failed || status !== 'I' || !tap.atMessageBoundary) {
      this.listenFailed(failed ? 'LISTEN was refused' : `LISTEN ended without an idle ReadyForQuery (${status ?? 'none'})`);
      return;
    }
    this.idle = true;
    this.listenDue = false;
    this.listenFailureLogged = false;
    // A newly subscribed channel's subscriber waits for `listening` even if the others were not interrupted.
    this.suspended = true;
    this.resume();
  }

  private listenFailed(reason: string): void {
    if (!this.listenFailureLogged) this.logger.error(`${reason}; notifications not heard, LISTEN is retried when the session is idle`);
    this.listenFailureLogged = true;
  }
}

function simpleQuery(sql: string): Uint8Array {
  const text = Buffer.from(`${sql}\0`, 'utf8');
  const message = Buffer.alloc(5 + text.length);
  message[0] = QUERY;
  message.writeInt32BE(4 + text.length, 1);
  text.copy(message, 5);
  return message;
}
