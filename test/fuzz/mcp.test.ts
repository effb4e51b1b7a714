import fc from 'fast-check';
import { MCP_TOOLS } from '../../src/mcp/mcp-tools.js';
import { startTestApp, TestApp } from '../support/test-app.js';
import { junk, toJson } from './support/encoding.js';
import { ErrorLog, expectMcpAnswer, printTally } from './support/expectations.js';
import { sendRaw } from './support/raw-http.js';
import { fuzzParameters } from './support/settings.js';
import { hostileText, storableText } from './support/text.js';
import { buildWorld, World } from './support/world.js';

// The MCP endpoint (/mcp) never answers bad input with a 5xx: JSON-RPC responses, tool results with
// isError for what a tool refuses, JSON-RPC errors over HTTP for what the transport refuses
// (src/mcp/mcp-errors.ts).

let t: TestApp;
let world: World;
let log: ErrorLog;
beforeAll(async () => {
  t = await startTestApp();
  world = await buildWorld(t);
  log = new ErrorLog(t);
});
afterAll(async () => {
  printTally();
  await t.close();
});

type Caller = 'anonymous' | 'api' | 'read_api' | 'attendee' | 'bad';
const caller = fc.constantFrom<Caller>('anonymous', 'api', 'api', 'read_api', 'attendee', 'attendee', 'bad');

function credentials(who: Caller): [string, string][] {
  if (who === 'api') return [['Authorization', `Bearer ${world.token}`]];
  if (who === 'read_api') return [['Private-Token', world.readToken]];
  if (who === 'attendee') return [['Authorization', `Bearer ${world.attendeeToken}`]];
  if (who === 'bad') return [['Authorization', 'Bearer agora_pat_not_a_token']];
  return [];
}

/** An argument's value: a real id or slug, text, a number, or anything. */
const value = () =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...world.uuids, ...world.pools.slugs, world.event.slug, world.draft.id, world.attendeeId) },
    { weight: 1, arbitrary: fc.constantFrom(...world.uuids).map((u) => u.toUpperCase()) },
    { weight: 2, arbitrary: storableText },
    { weight: 1, arbitrary: hostileText },
    { weight: 2, arbitrary: fc.oneof(fc.integer(), fc.double(), fc.constantFrom(0, -1, Number.MAX_VALUE, 50, 51, 10_001)) },
    { weight: 1, arbitrary: fc.constantFrom('2027-01-01T00:00:00Z', 'soon', 'confirmed', 'asc', 'desc', '') },
    {
      weight: 1,
      arbitrary: fc.array(fc.record({ name: storableText, email: fc.oneof(storableText, fc.emailAddress()) }), { maxLength: 3 }),
    },
    { weight: 1, arbitrary: junk },
  );

/** Arguments for a tool: mostly its own argument names, sometimes others. */
const argumentsFor = (names: string[]) =>
  fc.dictionary(fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...names, 'event') }, { weight: 1, arbitrary: storableText }), value(), {
    maxKeys: 5,
  });

const toolCall = fc.nat().chain((n) => {
  const tool = MCP_TOOLS[n % MCP_TOOLS.length]!;
  const names = Object.keys(tool.input.shape);
  return fc.record({
    jsonrpc: fc.constant('2.0'),
    id: fc.oneof(fc.nat(), storableText, fc.constant(null)),
    method: fc.constant('tools/call'),
    params: fc.record({
      name: fc.oneof({ weight: 8, arbitrary: fc.constant(tool.name) }, { weight: 1, arbitrary: hostileText }),
      arguments: fc.oneof({ weight: 8, arbitrary: argumentsFor(names) }, { weight: 1, arbitrary: junk }),
    }),
  });
});

const otherMessage = fc.record(
  {
    jsonrpc: fc.oneof({ weight: 5, arbitrary: fc.constant('2.0') }, { weight: 1, arbitrary: junk }),
    id: fc.oneof(fc.nat(), storableText, fc.constant(null), junk),
    method: fc.constantFrom('initialize', 'tools/list', 'ping', 'notifications/initialized', 'resources/list', 'prompts/get', 'foo'),
    params: junk,
  },
  { requiredKeys: ['method'] },
);

const body = fc.oneof(
  { weight: 8, arbitrary: toolCall.map(toJson) },
  { weight: 2, arbitrary: otherMessage.map(toJson) },
  { weight: 1, arbitrary: fc.array(fc.oneof(toolCall, otherMessage), { minLength: 1, maxLength: 3 }).map(toJson) },
  { weight: 1, arbitrary: junk.map(toJson) },
  { weight: 1, arbitrary: fc.constantFrom('{"jsonrpc": ', '{}', '[]', 'null', '"x"', '1e400', '') },
  { weight: 1, arbitrary: hostileText },
);

async function check(who: Caller, method: string, text: string | undefined, headers: [string, string][]): Promise<void> {
  const all: [string, string][] = [...credentials(who), ...headers];
  const description = `${method} /mcp as ${who} ${JSON.stringify(headers)} ${text?.slice(0, 1000) ?? ''}`;
  log.mark();
  const answer = await sendRaw(t.url, { method, target: '/mcp', headers: all, body: text });
  expectMcpAnswer(description, answer);
  log.expectNone(description);
}

describe('the MCP endpoint', () => {
  it('answers any JSON-RPC message, tool and arguments, for any caller', async () => {
    await fc.assert(
      fc.asyncProperty(caller, body, fc.constantFrom('2025-06-18', '2025-03-26', '2024-01-01', ''), async (who, text, version) => {
        const headers: [string, string][] = [
          ['Content-Type', 'application/json'],
          ['Accept', 'application/json, text/event-stream'],
        ];
        if (version) headers.push(['Mcp-Protocol-Version', version]);
        await check(who, 'POST', text, headers);
      }),
      fuzzParameters(4),
    );
  });

  it('answers other methods, media types and Accept headers', async () => {
    await fc.assert(
      fc.asyncProperty(
        caller,
        fc.constantFrom('GET', 'POST', 'DELETE', 'PUT', 'PATCH'),
        fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', ''),
        fc.constantFrom('application/json, text/event-stream', 'application/json', 'text/event-stream', '*/*', 'text/html', ''),
        fc.option(toolCall.map(toJson)),
        async (who, method, type, accept, text) => {
          const headers: [string, string][] = [];
          if (type) headers.push(['Content-Type', type]);
          if (accept) headers.push(['Accept', accept]);
          await check(who, method, method === 'GET' || method === 'DELETE' ? undefined : (text ?? undefined), headers);
        },
      ),
      fuzzParameters(),
    );
  });
});
