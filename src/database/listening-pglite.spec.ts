import { ListeningPGlite } from './listening-pglite.js';

const CHANNEL = 'agora_credentials';

function frontend(type: string, ...parts: (string | Buffer)[]): Uint8Array {
  const body = Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(`${part}\0`, 'utf8') : part)));
  const header = Buffer.alloc(5);
  header.write(type, 0, 'latin1');
  header.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
}

const int16 = (n: number) => Buffer.from([n >> 8, n & 0xff]);
const query = (sql: string) => frontend('Q', sql);
const parse = (name: string, sql: string) => frontend('P', name, sql, int16(0));
const bind = (statement: string) => frontend('B', '', statement, int16(0), int16(0), int16(0));
const execute = () => frontend('E', '', Buffer.alloc(4));
const closeStatement = (name: string) => frontend('C', Buffer.from('S'), name);
const sync = () => frontend('S');
/** One extended-protocol exchange for `sql`, as a driver sends it, message by message. */
const extended = (sql: string, withSync = true) => [parse('', sql), bind(''), execute(), ...(withSync ? [sync()] : [])];

describe('ListeningPGlite', () => {
  let db: ListeningPGlite;
  /** What the subscriber heard and what the client was sent (`out Z<status>` for a ReadyForQuery), in order. */
  let events: string[];
  let failNext = false;

  beforeAll(async () => {
    db = new ListeningPGlite('memory://');
    await db.waitReady;
  });

  afterAll(() => db.close());

  beforeEach(async () => {
    events = [];
    await db.subscribe(CHANNEL, {
      notified: (payload) => {
        events.push(`notified ${payload}`);
        if (failNext) {
          failNext = false;
          throw new Error('eviction failed');
        }
      },
      interrupted: (cause) => events.push(`interrupted ${cause}`),
      listening: () => events.push('listening'),
    });
    expect(events).toEqual(['listening']);
    events = [];
  });

  /** Sends `messages` as a socket client would, one at a time. */
  async function send(...messages: Uint8Array[]): Promise<void> {
    for (const message of messages)
      await db.execProtocolRawStream(message, {
        onRawData: (data) => {
          for (let at = data.indexOf(0x5a); at !== -1 && at + 5 < data.length; at = data.indexOf(0x5a, at + 1))
            if (Buffer.from(data.buffer, data.byteOffset, data.byteLength).readInt32BE(at + 1) === 5)
              events.push(`out Z${String.fromCharCode(data[at + 5]!)}`);
        },
      });
  }

  const kinds = () => events.map((event) => event.replace(/^interrupted .*/, 'interrupted'));

  it('hears a notification a client commits, before that client’s ReadyForQuery', async () => {
    await send(query(`SELECT pg_notify('${CHANNEL}', 'tokens:1')`));
    expect(kinds()).toEqual(['notified tokens:1', 'out ZI']);
  });

  it('interrupts before a Bind of a statement prepared as UNLISTEN, long after its Parse, and listens again', async () => {
    await send(parse('u', 'UNLISTEN *'), sync());
    expect(kinds()).toEqual(['interrupted', 'out ZI', 'listening']);
    events = [];

    await send(bind('u'), execute(), sync());
    expect(kinds()).toEqual(['interrupted', 'out ZI', 'listening']);
    events = [];
    await send(query(`SELECT pg_notify('${CHANNEL}', 'after')`));
    expect(kinds()).toEqual(['notified after', 'out ZI']);

    // Closed, the name can be reused for a harmless statement.
    await send(closeStatement('u'), sync(), parse('u', 'SELECT 1'), sync());
    events = [];
    await send(bind('u'), execute(), sync());
    expect(kinds()).toEqual(['out ZI']);
    await send(closeStatement('u'), sync());
  });

  it('interrupts before an SQL EXECUTE of a statement prepared as UNLISTEN', async () => {
    await send(parse('quiet', 'UNLISTEN *'), sync());
    events = [];
    await send(query('EXECUTE quiet'));
    expect(kinds()).toEqual(['interrupted', 'out ZI', 'listening']);
    await send(query('DEALLOCATE quiet'));
    events = [];
    await send(query("SELECT 'execute quiet'"));
    expect(kinds()).toEqual(['out ZI']);
  });

  it('is not fooled by words that merely contain UNLISTEN or DISCARD, nor by a DISCARD that keeps LISTEN', async () => {
    await send(query("SELECT 'discarded_at' AS unlistened; DISCARD PLANS"));
    expect(kinds()).toEqual(['out ZI']);
  });

  it('holds the cache off when a COMMIT is answered inside a new transaction, until the session is idle and the notification heard', async () => {
    await send(query(`BEGIN; SELECT pg_notify('${CHANNEL}', 'late'); COMMIT; BEGIN`));
    expect(kinds()).toEqual(['interrupted', 'out ZT']);
    events = [];
    await send(query('COMMIT'));
    expect(kinds()).toEqual(['notified late', 'listening', 'out ZI']);
  });

  it('does the same for an extended-protocol pipeline that sends COMMIT then BEGIN before its Sync', async () => {
    await send(...extended('BEGIN', false), ...extended(`SELECT pg_notify('${CHANNEL}', 'piped')`, false), ...extended('COMMIT', false));
    expect(kinds()).toEqual(['interrupted']);
    // Here PostgreSQL sends the notification when it reads the next message outside a transaction.
    await send(...extended('BEGIN'));
    expect(kinds()).toEqual(['interrupted', 'notified piped', 'out ZT']);
    events = [];
    await send(...extended('COMMIT'));
    expect(kinds()).toEqual(['listening', 'out ZI']);
  });

  it('keeps serving the client when a subscriber throws: interrupts, and listens again', async () => {
    failNext = true;
    await send(query(`SELECT pg_notify('${CHANNEL}', 'boom')`));
    expect(kinds()).toEqual(['notified boom', 'interrupted', 'out ZI', 'listening']);
    events = [];
    await send(query(`SELECT pg_notify('${CHANNEL}', 'fine')`));
    expect(kinds()).toEqual(['notified fine', 'out ZI']);
  });
});
