import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adminQuery, serverUrl, withDatabase } from '../support/database.js';
import { ROOT, ServerProcess, startServer as startCopy, waitForHttp } from '../support/processes.js';
import { freePort } from '../support/test-app.js';
import { ProjectCopy } from './project-copy.js';

/** One `<!-- apply: … -->` note of docs/extending.md and the code block under it. */
interface Step {
  action: 'insert-after' | 'insert-before' | 'replace' | 'append' | 'run';
  file?: string;
  anchor?: string;
  code: string;
}

function guideSteps(markdown: string): Step[] {
  const steps: Step[] = [];
  const pattern = /<!-- apply: ([^>]*?) -->\n```[a-z]*\n([\s\S]*?)```\n/g;
  for (const [, note, code] of markdown.matchAll(pattern)) {
    const [action, file, ...anchor] = note!.split(' | ');
    steps.push({ action: action as Step['action'], file, anchor: anchor.length > 0 ? anchor.join(' | ') : undefined, code: code! });
  }
  return steps;
}

/** The one line of `text` containing `anchor`; the guide is wrong if there is none or more than one. */
function lineWith(text: string, anchor: string, file: string): { start: number; end: number } {
  const lines = text.split('\n');
  const found = lines.flatMap((line, i) => (line.includes(anchor) ? [i] : []));
  if (found.length !== 1) throw new Error(`${file}: the guide's anchor ${JSON.stringify(anchor)} matches ${found.length} lines, not one`);
  const start = lines.slice(0, found[0]).reduce((n, line) => n + line.length + 1, 0);
  return { start, end: start + lines[found[0]!]!.length + 1 };
}

async function apply(copy: ProjectCopy, step: Step): Promise<void> {
  if (step.action === 'run') {
    for (const command of step.code.trim().split('\n')) {
      const result = await copy.run('sh', ['-c', command], { DATABASE_URL: '' });
      if (result.code !== 0) throw new Error(`\`${command}\` failed (${result.code}):\n${result.output}`);
    }
    return;
  }
  const file = step.file!;
  const text = step.action === 'append' ? '' : copy.read(file);
  if (step.action === 'append') copy.write(file, (existsSync(join(copy.dir, file)) ? copy.read(file) : '') + step.code);
  else if (step.action === 'replace') copy.replace(file, step.anchor!, step.code.replace(/\n$/, ''));
  else {
    const { start, end } = lineWith(text, step.anchor!, file);
    copy.write(
      file,
      step.action === 'insert-after'
        ? text.slice(0, end) + step.code + text.slice(end)
        : text.slice(0, start) + step.code + text.slice(start),
    );
  }
}

async function startServer(copy: ProjectCopy, database: Record<string, string>): Promise<ServerProcess & { url: string }> {
  const port = await freePort();
  const server = startCopy({ ...database, PORT: String(port), HOST: '127.0.0.1' }, copy.dir);
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/readyz`, server);
  return { ...server, url };
}

describe('docs/extending.md, applied to a copy of the project', () => {
  const copy = new ProjectCopy();
  const dataDir = mkdtempSync(join(tmpdir(), 'agora-guide-data-'));
  // The databases the copy serves from, each migrated from empty at start-up: an embedded one in dataDir
  // always, and a new database on the PostgreSQL server DATABASE_URL names when it names one (one build,
  // served on both: CI runs this tier once, with DATABASE_URL set).
  const databaseName = `agora_guide_${process.pid}`;
  const databases: Array<[string, Record<string, string>]> = [['the embedded database', { DATABASE_URL: '', DATA_DIR: dataDir }]];
  if (serverUrl()) databases.push(['PostgreSQL', { DATABASE_URL: withDatabase(serverUrl()!, databaseName) }]);
  let server: (ServerProcess & { url: string }) | undefined;
  const stopServer = async () => {
    if (!server) return;
    server.child.kill('SIGTERM');
    await server.exited;
    server = undefined;
  };
  beforeAll(async () => {
    if (serverUrl()) await adminQuery(`CREATE DATABASE ${databaseName}`);
  });
  afterAll(async () => {
    await stopServer();
    copy.remove();
    rmSync(dataDir, { recursive: true, force: true });
    if (serverUrl()) await adminQuery(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`);
  });

  const steps = guideSteps(readFileSync(join(ROOT, 'docs/extending.md'), 'utf8'));

  it('has a walkthrough: a stored field, a migration, a mutation, a query with an argument, a field resolver', () => {
    expect(steps.length).toBeGreaterThanOrEqual(15);
    expect(steps.filter((s) => s.action === 'run').map((s) => s.code.trim())).toEqual(
      expect.arrayContaining([
        'npm run -s migration:generate -- --name event-dress-code',
        'npm run -s migration:generate -- --name notes',
        'npm run codegen',
        expect.stringMatching(/^npm run typecheck\n/),
      ]),
    );
  });

  it('applies every step, generates migrations that run last and pass the lint, and type-checks', async () => {
    for (const step of steps) await apply(copy, step);
    const index = copy.read('src/database/migrations/index.ts');
    const list = /export const MIGRATIONS = \[([^\]]*)\]/.exec(index)![1]!.match(/\w+/g)!;
    expect(list.slice(-2)).toEqual([expect.stringMatching(/^EventDressCode\d+$/), expect.stringMatching(/^Notes\d+$/)]);
    const timestamps = list.map((name) => Number(/\d+$/.exec(name)![0]));
    expect(timestamps).toEqual([...timestamps].sort((a, b) => a - b));
    const [notes] = list.slice(-1);
    const migration = copy.read(`src/database/migrations/${/\d+$/.exec(notes!)![0]}-notes.ts`);
    expect(migration).toContain('DEFAULT gen_random_uuid()');
    expect(migration).not.toContain('uuid_generate_v4');
  });

  it('builds', async () => {
    const build = await copy.run('npm', ['run', '-s', 'build']);
    expect(build.output).toBe('');
  });

  it.each(databases)('starts on %s, and serves the new field, mutation, query and field resolver', async (_name, database) => {
    await stopServer();
    server = await startServer(copy, database);
    const cli = async (...args: string[]) => {
      const result = await copy.run('node', ['dist/src/cli/main.js', ...args], { ...database, LOG_LEVEL: 'warn' });
      if (result.code !== 0) throw new Error(result.output);
      return JSON.parse(result.output) as Record<string, string>;
    };
    await cli(
      'users:create',
      '--username',
      'ada',
      '--email',
      'ada@example.com',
      '--name',
      'Ada',
      '--password',
      'correct-horse-battery-staple',
    );
    const { token } = await cli('tokens:create', '--user', 'ada', '--name', 'guide', '--scopes', 'api');
    const gql = async (query: string, variables: Record<string, unknown> = {}, auth = true) => {
      const res = await fetch(`${server!.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(auth ? { 'private-token': token! } : {}) },
        body: JSON.stringify({ query, variables }),
      });
      return { status: res.status, body: (await res.json()) as { data?: any; errors?: any[] } };
    };

    const organizer = await gql(
      `mutation { createOrganizer(input: { slug: "guide-org", name: "Guide" }) { organizer { id } userErrors { code } } }`,
    );
    const organizerId = organizer.body.data.createOrganizer.organizer.id;
    const created = await gql(
      `mutation($input: CreateEventInput!) { createEvent(input: $input) { event { id dressCode ticketTypeCount } userErrors { code } } }`,
      {
        input: {
          organizerId,
          slug: 'guide-gala',
          title: 'Gala',
          startsAt: '2099-05-01T18:00:00Z',
          endsAt: '2099-05-01T23:00:00Z',
          timeZone: 'Europe/Paris',
          format: 'ONLINE',
          onlineUrl: 'https://example.com/live',
        },
      },
    );
    expect(created.body.data.createEvent.event).toMatchObject({ dressCode: null, ticketTypeCount: 0 });
    const eventId = created.body.data.createEvent.event.id;

    const setDressCode = `mutation($input: SetEventDressCodeInput!) {
      setEventDressCode(input: $input) { event { id dressCode } userErrors { field code } } }`;
    const set = await gql(setDressCode, { input: { eventId, dressCode: '  Black tie ' } });
    expect(set.body.data.setEventDressCode).toEqual({ event: { id: eventId, dressCode: 'Black tie' }, userErrors: [] });
    const tooLong = await gql(setDressCode, { input: { eventId, dressCode: 'x'.repeat(101) } });
    expect(tooLong.body.data.setEventDressCode).toEqual({
      event: null,
      userErrors: [{ field: ['input', 'dressCode'], code: 'INVALID_DRESS_CODE' }],
    });
    const anonymous = await gql(setDressCode, { input: { eventId, dressCode: 'None' } }, false);
    expect(anonymous.status).toBe(401);

    await gql(`mutation($input: CreateTicketTypeInput!) { createTicketType(input: $input) { userErrors { code } } }`, {
      input: { eventId, name: 'Seat', price: { amount: 0, currency: 'EUR' } },
    });
    await gql(`mutation($input: EventIdInput!) { publishEvent(input: $input) { userErrors { code } } }`, { input: { eventId } });

    const found = await gql(
      `query($code: String!) { eventsWithDressCode(dressCode: $code) { slug dressCode ticketTypeCount } }`,
      { code: 'BLACK TIE' },
      false,
    );
    expect(found.body).toEqual({ data: { eventsWithDressCode: [{ slug: 'guide-gala', dressCode: 'Black tie', ticketTypeCount: 1 }] } });
    const none = await gql(`{ eventsWithDressCode(dressCode: "Casual") { slug } }`, {}, false);
    expect(none.body).toEqual({ data: { eventsWithDressCode: [] } });

    // The module of its own: a table with a generated uuid key, a mutation, a query, both behind a token.
    const addNote = `mutation($input: AddNoteInput!) { addNote(input: $input) { note { id text } userErrors { field code } } }`;
    const first = await gql(addNote, { input: { text: ' Bring the tickets ' } });
    expect(first.body.data.addNote).toEqual({
      note: { id: expect.stringMatching(/^[0-9a-f-]{36}$/), text: 'Bring the tickets' },
      userErrors: [],
    });
    await gql(addNote, { input: { text: 'Book the train' } });
    expect((await gql(addNote, { input: { text: '  ' } })).body.data.addNote).toEqual({
      note: null,
      userErrors: [{ field: ['input', 'text'], code: 'INVALID_NOTE' }],
    });
    const notes = await gql(`{ viewerNotes { text } }`);
    expect(notes.body).toEqual({ data: { viewerNotes: [{ text: 'Book the train' }, { text: 'Bring the tickets' }] } });
    expect((await gql(`{ viewerNotes { text } }`, {}, false)).status).toBe(401);
  });
});
