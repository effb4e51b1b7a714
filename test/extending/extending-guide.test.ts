import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
  if (step.action === 'append') copy.write(file, copy.read(file) + step.code);
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

async function startServer(copy: ProjectCopy, dataDir: string): Promise<ServerProcess & { url: string }> {
  const port = await freePort();
  const server = startCopy({ DATABASE_URL: '', DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1' }, copy.dir);
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/readyz`, server);
  return { ...server, url };
}

describe('docs/extending.md, applied to a copy of the project', () => {
  const copy = new ProjectCopy();
  const dataDir = mkdtempSync(join(tmpdir(), 'agora-guide-data-'));
  let server: (ServerProcess & { url: string }) | undefined;
  afterAll(async () => {
    if (server) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    copy.remove();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const steps = guideSteps(readFileSync(join(ROOT, 'docs/extending.md'), 'utf8'));

  it('has a walkthrough: a stored field, a migration, a mutation, a query with an argument, a field resolver', () => {
    expect(steps.length).toBeGreaterThanOrEqual(15);
    expect(steps.filter((s) => s.action === 'run').map((s) => s.code.trim())).toEqual(
      expect.arrayContaining(['npm run -s migration:generate -- --name event-dress-code', 'npm run codegen', 'npm run typecheck']),
    );
  });

  it('applies every step, generates a migration and type-checks', async () => {
    for (const step of steps) await apply(copy, step);
    const index = copy.read('src/database/migrations/index.ts');
    expect(index).toMatch(/EventDressCode\d+/);
  });

  it('builds, starts, and serves the new field, mutation, query and field resolver', async () => {
    const build = await copy.run('npm', ['run', '-s', 'build']);
    expect(build.output).toBe('');
    server = await startServer(copy, dataDir);
    const cli = async (...args: string[]) => {
      const result = await copy.run('node', ['dist/src/cli/main.js', ...args], { DATABASE_URL: '', DATA_DIR: dataDir, LOG_LEVEL: 'warn' });
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
  });
});
