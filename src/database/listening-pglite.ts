import { PGlite } from '@electric-sql/pglite';
import { ProtocolTap } from './protocol-tap.js';

/** Hears a channel's notifications in the process that holds the embedded database. */
export interface NotificationSubscriber {
  /** A notification, called before the client whose commit sent it receives any answer to that commit. */
  notified(payload: string): void;
  /** Notifications may be missed from now on (a client ran UNLISTEN or DISCARD), until `listening`. */
  interrupted(): void;
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
const ERROR_RESPONSE = 0x45; // 'E'
const TERMINATE = 0x58; // 'X'
const MAY_UNLISTEN = /unlisten|discard/i;

/**
 * PGlite is one PostgreSQL backend: every socket client's statements run in its single session, and a
 * notification that a client's commit sends to a channel this session listens on is written into that
 * client's own output, just before its ReadyForQuery. PGlite's `listen()` callbacks never hear these
 * (the socket server reads the raw output, bypassing PGlite's parser). So this subclass reads the output
 * the socket server relays, takes out notifications on subscribed channels and hands them to their
 * subscriber synchronously, before the rest of that output (ReadyForQuery, the answer the client waits
 * for) is relayed. The clients, which never listened, never see them.
 *
 * LISTEN is a property of the shared session, so a client could end it (UNLISTEN, DISCARD ALL): a
 * message that mentions either interrupts the subscribers before it runs, and LISTEN is issued again
 * at the next point where no client is in the middle of an exchange.
 */
export class ListeningPGlite extends PGlite implements InProcessNotifications {
  private readonly subscribers = new Map<string, NotificationSubscriber>();
  private readonly tap = new ProtocolTap({
    notification: (channel, payload) => this.deliver(channel, payload),
    ready: (status) => (this.atRest = status === 'I'),
  });
  /** The last message run ended an exchange outside any transaction: a statement of ours can run now. */
  private atRest = true;
  private listenDue = false;

  constructor(dataDir: string) {
    super(dataDir);
    // What this process runs on PGlite directly (the socket server's ROLLBACK of a departed client's
    // transaction) is answered through PGlite's own parser, which reports notifications here.
    this.onNotification((channel, payload) => this.deliver(channel, payload));
  }

  async subscribe(channel: string, subscriber: NotificationSubscriber): Promise<void> {
    if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`Not a plain channel name: ${channel}`);
    this.subscribers.set(channel, subscriber);
    this.listenDue = true;
    await this.runExclusive(async () => {
      if (this.atRest) await this.listenAll();
    });
  }

  override async execProtocolRawStream(message: Uint8Array, options: StreamOptions): Promise<void> {
    if (this.subscribers.size > 0 && mayUnlisten(message)) this.interrupt();
    if (message[0] !== TERMINATE) this.atRest = false;
    try {
      await super.execProtocolRawStream(message, { ...options, onRawData: (data) => this.tap.feed(data, options.onRawData) });
    } finally {
      if (!this.tap.atMessageBoundary) {
        // Output that stops inside a message: the stream can no longer be followed with certainty.
        this.tap.reset();
        this.interrupt();
      }
    }
    if (this.listenDue && this.atRest) await this.listenAll();
  }

  private deliver(channel: string, payload: string): boolean {
    const subscriber = this.subscribers.get(channel);
    subscriber?.notified(payload);
    return subscriber !== undefined;
  }

  private interrupt(): void {
    this.listenDue = true;
    for (const subscriber of this.subscribers.values()) subscriber.interrupted();
  }

  /** Runs between two exchanges (inside the socket server's exclusive section), never inside a client's. */
  private async listenAll(): Promise<void> {
    const channels = [...this.subscribers.keys()];
    const output: Uint8Array[] = [];
    await super.execProtocolRawStream(simpleQuery(channels.map((channel) => `LISTEN ${channel};`).join(' ')), {
      onRawData: (data) => output.push(data.slice()),
    });
    if (hasErrorResponse(Buffer.concat(output))) return;
    this.listenDue = false;
    for (const channel of channels) this.subscribers.get(channel)!.listening();
  }
}

function mayUnlisten(message: Uint8Array): boolean {
  if (message[0] !== QUERY && message[0] !== PARSE) return false;
  return MAY_UNLISTEN.test(Buffer.from(message.buffer, message.byteOffset, message.byteLength).toString('latin1'));
}

/** Whether a backend's whole output for one message holds an ErrorResponse. */
function hasErrorResponse(output: Buffer): boolean {
  for (let at = 0; at + 5 <= output.length; at += 1 + output.readInt32BE(at + 1)) if (output[at] === ERROR_RESPONSE) return true;
  return false;
}

function simpleQuery(sql: string): Uint8Array {
  const text = Buffer.from(`${sql}\0`, 'utf8');
  const message = Buffer.alloc(5 + text.length);
  message[0] = QUERY;
  message.writeInt32BE(4 + text.length, 1);
  text.copy(message, 5);
  return message;
}
