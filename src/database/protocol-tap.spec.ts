import { ProtocolTap } from './protocol-tap.js';

function message(type: string, body: Uint8Array | string): Buffer {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body);
  const header = Buffer.alloc(5);
  header.write(type, 0, 'latin1');
  header.writeInt32BE(bytes.length + 4, 1);
  return Buffer.concat([header, bytes]);
}

const notification = (channel: string, payload: string): Buffer =>
  message('A', Buffer.concat([Buffer.from([0, 0, 0, 42]), Buffer.from(`${channel}\0${payload}\0`, 'utf8')]));
const commandComplete = message('C', 'COMMIT\0');
const ready = (status: string) => message('Z', status);
const dataRow = message('D', Buffer.concat([Buffer.from([0, 1, 0, 0, 0, 3]), Buffer.from('abc')]));

/** Feeds `stream` cut at `cuts`, recording in order what is forwarded and what is heard. */
function run(stream: Buffer, cuts: number[], taken = new Set(['agora_credentials'])) {
  const events: string[] = [];
  const forwarded: Buffer[] = [];
  const tap = new ProtocolTap({
    notification: (channel, payload) => {
      events.push(`notified ${channel} ${payload}`);
      return taken.has(channel);
    },
    ready: (status) => events.push(`ready ${status}`),
  });
  let at = 0;
  for (const cut of [...cuts, stream.length]) {
    tap.feed(stream.subarray(at, cut), (bytes) => {
      forwarded.push(Buffer.from(bytes));
      events.push(`forwarded ${bytes.length}`);
    });
    at = cut;
  }
  return { events, forwarded: Buffer.concat(forwarded), tap };
}

/** Every way of cutting `length` bytes into two or three pieces. */
function cutsOf(length: number): number[][] {
  const all: number[][] = [[]];
  for (let a = 1; a < length; a++) {
    all.push([a]);
    for (let b = a + 1; b < length; b++) all.push([a, b]);
  }
  return all;
}

describe('ProtocolTap', () => {
  it('forwards a stream without notifications unchanged, in the chunks it came in', () => {
    const stream = Buffer.concat([dataRow, dataRow, commandComplete, ready('I')]);
    const { events, forwarded } = run(stream, [3, 20]);
    expect(forwarded.equals(stream)).toBe(true);
    expect(events).toEqual(['forwarded 3', 'forwarded 17', 'ready I', `forwarded ${stream.length - 20}`]);
  });

  it('takes out a notification on a channel it is asked for, and hears it before the ReadyForQuery is forwarded', () => {
    const stream = Buffer.concat([commandComplete, notification('agora_credentials', 'personal_access_tokens:7'), ready('I')]);
    const { events, forwarded } = run(stream, []);
    expect(forwarded.equals(Buffer.concat([commandComplete, ready('I')]))).toBe(true);
    expect(events.indexOf('notified agora_credentials personal_access_tokens:7')).toBeLessThan(
      events.indexOf(`forwarded ${ready('I').length}`),
    );
  });

  it('keeps a notification on any other channel in the stream', () => {
    const stream = Buffer.concat([commandComplete, notification('elsewhere', 'x'), ready('T')]);
    const { events, forwarded } = run(stream, []);
    expect(forwarded.equals(stream)).toBe(true);
    expect(events).toContain('notified elsewhere x');
    expect(events).toContain('ready T');
  });

  it('finds every message however the stream is cut, and is heard before any later byte goes out', () => {
    const taken = notification('agora_credentials', 'users:é1');
    const kept = notification('other', '');
    const stream = Buffer.concat([dataRow, taken, commandComplete, kept, ready('I')]);
    const expected = Buffer.concat([dataRow, commandComplete, kept, ready('I')]);
    for (const cuts of cutsOf(stream.length)) {
      const { events, forwarded, tap } = run(stream, cuts);
      expect(forwarded.equals(expected)).toBe(true);
      expect(events.filter((e) => !e.startsWith('forwarded'))).toEqual([
        'notified agora_credentials users:é1',
        'notified other ',
        'ready I',
      ]);
      // Nothing after the taken notification went out before it was heard.
      let bytesBefore = 0;
      for (const event of events.slice(0, events.indexOf('notified agora_credentials users:é1')))
        if (event.startsWith('forwarded')) bytesBefore += Number(event.split(' ')[1]);
      expect(bytesBefore).toBeLessThanOrEqual(dataRow.length);
      expect(tap.atMessageBoundary).toBe(true);
    }
  });

  it('knows when output stops in the middle of a message', () => {
    const { tap } = run(dataRow.subarray(0, 7), []);
    expect(tap.atMessageBoundary).toBe(false);
    tap.reset();
    expect(tap.atMessageBoundary).toBe(true);
  });

  it('keeps nothing that points into a chunk: the chunk may be overwritten as soon as feed returns', () => {
    const taken = notification('agora_credentials', 'users:1');
    const stream = Buffer.concat([commandComplete, taken, ready('I')]);
    for (const cut of [2, commandComplete.length + 3, commandComplete.length + 9, stream.length - 3]) {
      const events: string[] = [];
      const forwarded: Buffer[] = [];
      const tap = new ProtocolTap({
        notification: (channel, payload) => (events.push(`notified ${channel} ${payload}`), true),
        ready: (status) => events.push(`ready ${status}`),
        complete: (tag) => events.push(`complete ${tag}`),
      });
      // One reused buffer, as PGlite's output lives in wasm memory.
      const memory = Buffer.alloc(stream.length);
      for (const [from, to] of [
        [0, cut],
        [cut, stream.length],
      ] as const) {
        stream.copy(memory, 0, from, to);
        tap.feed(memory.subarray(0, to - from), (bytes) => forwarded.push(Buffer.from(bytes)));
        memory.fill(0xff);
      }
      expect(events).toEqual(['complete COMMIT', 'notified agora_credentials users:1', 'ready I']);
      expect(Buffer.concat(forwarded).equals(Buffer.concat([commandComplete, ready('I')]))).toBe(true);
    }
  });

  it('hears two notifications that come back to back, in order, and takes both out', () => {
    const stream = Buffer.concat([notification('agora_credentials', 'a'), notification('agora_credentials', 'b'), ready('I')]);
    for (const cuts of [[], [3], [stream.length - 8], [notification('agora_credentials', 'a').length]]) {
      const { events, forwarded } = run(stream, cuts);
      expect(events.filter((e) => !e.startsWith('forwarded'))).toEqual([
        'notified agora_credentials a',
        'notified agora_credentials b',
        'ready I',
      ]);
      expect(forwarded.equals(ready('I'))).toBe(true);
    }
  });

  it('reads a ReadyForQuery split across chunks at every byte, and reports its status before forwarding it', () => {
    const stream = Buffer.concat([commandComplete, ready('T')]);
    for (let cut = commandComplete.length + 1; cut <= stream.length; cut++) {
      const { events, forwarded } = run(stream, cut < stream.length ? [cut] : []);
      expect(forwarded.equals(stream)).toBe(true);
      const statusSent = events.findIndex((e, i) => e.startsWith('forwarded') && i > events.indexOf('ready T'));
      expect(events).toContain('ready T');
      expect(statusSent).toBeGreaterThan(events.indexOf('ready T'));
    }
  });

  it('reports a CommandComplete tag however it is cut, while forwarding the message unchanged', () => {
    const stream = Buffer.concat([message('C', 'COMMIT PREPARED\0'), ready('I')]);
    for (const cuts of cutsOf(stream.length)) {
      const tags: string[] = [];
      const forwarded: Buffer[] = [];
      const tap = new ProtocolTap({ notification: () => false, ready: () => undefined, complete: (tag) => tags.push(tag) });
      let at = 0;
      for (const cut of [...cuts, stream.length]) {
        tap.feed(stream.subarray(at, cut), (bytes) => forwarded.push(Buffer.from(bytes)));
        at = cut;
      }
      expect(tags).toEqual(['COMMIT PREPARED']);
      expect(Buffer.concat(forwarded).equals(stream)).toBe(true);
    }
  });
});
