import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from '../support/processes.js';
import { freePort } from '../support/test-app.js';
import { CommandResult, ProjectCopy } from './project-copy.js';

/**
 * The schema and the resolvers are tied by generated types (scripts/codegen.mjs, src/graphql/resolver-types.ts):
 * a `.graphql` change that the resolvers do not follow fails `npm run typecheck`.
 */
describe('schema-first typing', () => {
  // Three independent changes to src/events/events.graphql that the resolvers do not follow, made to one
  // copy and checked by one codegen and type-check (each type-check of the project takes half a minute):
  // each must be reported on its own. That the unchanged project passes the same commands is shown by the
  // copy below, whose change codegen and the type-check accept.
  let copy: ProjectCopy;
  let result: CommandResult;
  beforeAll(async () => {
    copy = new ProjectCopy();
    // An argument renamed.
    copy.replace('src/events/events.graphql', '    slug: String\n  ): Event', '    handle: String\n  ): Event');
    // A paging argument of a connection renamed. Every paging argument is optional: without the check in
    // toPageRequest (src/graphql/connection.ts), the generated QueryEventsArgs without `first` would still
    // fit it, and `first` would be ignored at run time.
    copy.replace(
      'src/events/events.graphql',
      '    Returns the first n events after `after`; at most 100, 20 when neither `first` nor `last` is given.\n    """\n    first: Int',
      '    Returns the first n events after `after`; at most 100, 20 when neither `first` nor `last` is given.\n    """\n    count: Int',
    );
    // A field added that nothing resolves.
    copy.replace(
      'src/events/events.graphql',
      'type Event implements Node {\n',
      'type Event implements Node {\n  "Dress code."\n  dressCode: String\n\n',
    );
    result = await copy.codegenAndTypecheck();
  }, 300_000);
  afterAll(() => copy.remove());

  it('fails the type-check', () => {
    expect(result.code).not.toBe(0);
  });

  it('names an argument renamed in a .graphql file and not in its resolver', () => {
    expect(result.output).toMatch(
      /src\/events\/events\.resolver\.ts.*error TS\d+: Property 'slug' does not exist on type 'QueryEventArgs'/,
    );
  });

  it('names a paging argument of a connection renamed in a .graphql file', () => {
    expect(result.output).toMatch(/src\/events\/events\.resolver\.ts[^\n]*error TS\d+[\s\S]*missingPagingArguments: "first"/);
  });

  it('names a field added to a .graphql file that nothing resolves', () => {
    expect(result.output).toMatch(/src\/events\/events\.resolver\.ts[^\n]*error TS2420[\s\S]*unresolvedFields: "dressCode"/);
  });
});

describe('a root field without a resolver', () => {
  let copy: ProjectCopy;
  const dataDir = mkdtempSync(join(tmpdir(), 'agora-orphan-data-'));
  beforeAll(() => {
    copy = new ProjectCopy();
  });
  afterAll(() => {
    copy.remove();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('passes codegen and the type-check (resolvers list the root fields they bind)', async () => {
    copy.write(
      'src/events/events.graphql',
      `${copy.read('src/events/events.graphql')}\nextend type Query {\n  "Events nobody resolves."\n  orphanEvents: [Event!]!\n}\n`,
    );
    const result = await copy.codegenAndTypecheck();
    expect(result.output).toBe('');
    expect(result.code).toBe(0);
  });

  it('stops the server at start-up, naming the field, instead of answering "Internal server error"', async () => {
    expect((await copy.run('npm', ['run', '-s', 'build'])).output).toBe('');
    const server = startServer({ DATABASE_URL: '', DATA_DIR: dataDir, PORT: String(await freePort()), HOST: '127.0.0.1' }, copy.dir);
    expect(await server.exited).not.toBe(0);
    expect(server.output()).toContain('GraphQL root field without a resolver: Query.orphanEvents.');
  });
});

describe('layers', () => {
  // Three independent breaches of the layers, made to one copy and checked by one run of
  // `npm run lint:layers` (scripts/layers.mjs): each must be reported on its own. The project itself
  // passes the same command (.ci/run runs it).
  let copy: ProjectCopy;
  let result: CommandResult;
  beforeAll(async () => {
    copy = new ProjectCopy();
    const prepend = (file: string, line: string) => copy.write(file, `${line}\n${copy.read(file)}`);
    // The foundation importing a feature: a file rule.
    prepend('src/database/uuid.ts', `import { EventsService } from '../events/events.service.js';\nexport const unused = EventsService;`);
    // users/ naming a type of events/, which depends on users/: no file circle, a cycle between folders.
    prepend(
      'src/users/user-validation.ts',
      `import type { EventsReader } from '../events/events.reader.js';\nexport type Unused = EventsReader;`,
    );
    // Inside oauth/: clients/ reading discovery/, which reads clients/.
    prepend(
      'src/oauth/clients/client-keys.ts',
      `import type { MetadataOptions } from '../discovery/server-metadata.js';\nexport type Unused = MetadataOptions;`,
    );
    result = await copy.run('node', ['scripts/layers.mjs']);
  }, 300_000);
  afterAll(() => copy.remove());

  it('fails', () => {
    expect(result.code).not.toBe(0);
  });

  it('refuses an upward import: the foundation importing a feature', () => {
    expect(result.output).toContain('foundation-knows-no-feature: src/database/uuid.ts → src/events/events.service.ts');
  });

  it('refuses a cycle between two folders of src/ that no file circle shows', () => {
    expect(result.output).toMatch(/no-circular-between-folders: [^\n]*src\/events\/,[^\n]*src\/users\/,[^\n]* depend on each other/);
    expect(result.output).toContain('src/users/ -> src/events/: src/users/user-validation.ts -> src/events/events.reader.ts');
  });

  it('refuses a cycle between the sub-folders of a folder', () => {
    expect(result.output).toMatch(
      /no-circular-between-sub-folders: [^\n]*src\/oauth\/clients\/, src\/oauth\/discovery\/[^\n]* depend on each other/,
    );
    expect(result.output).toContain(
      'src/oauth/clients/ -> src/oauth/discovery/: src/oauth/clients/client-keys.ts -> src/oauth/discovery/server-metadata.ts',
    );
  });
});
