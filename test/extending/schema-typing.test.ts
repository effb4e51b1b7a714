import { ProjectCopy } from './project-copy.js';

/**
 * The schema and the resolvers are tied by generated types (scripts/codegen.mjs, src/graphql/resolver-types.ts):
 * a `.graphql` change that the resolvers do not follow fails `npm run typecheck`.
 */
describe('schema-first typing', () => {
  let copy: ProjectCopy;
  beforeEach(() => {
    copy = new ProjectCopy();
  });
  afterEach(() => copy.remove());

  it('type-checks the project as it stands', async () => {
    const result = await copy.codegenAndTypecheck();
    expect(result.output).toBe('');
    expect(result.code).toBe(0);
  });

  it('fails the type-check when an argument is renamed in a .graphql file and not in its resolver', async () => {
    copy.replace('src/events/events.graphql', '    slug: String\n  ): Event', '    handle: String\n  ): Event');
    const result = await copy.codegenAndTypecheck();
    expect(result.code).not.toBe(0);
    expect(result.output).toMatch(
      /src\/events\/events\.resolver\.ts.*error TS\d+: Property 'slug' does not exist on type 'QueryEventArgs'/,
    );
  });

  it('fails the type-check when a field is added to a .graphql file and nothing resolves it', async () => {
    copy.replace(
      'src/events/events.graphql',
      'type Event implements Node {\n',
      'type Event implements Node {\n  "Dress code."\n  dressCode: String\n\n',
    );
    const result = await copy.codegenAndTypecheck();
    expect(result.code).not.toBe(0);
    expect(result.output).toMatch(/src\/events\/events\.resolver\.ts[^\n]*error TS2420[\s\S]*unresolvedFields: "dressCode"/);
  });
});

describe('layers', () => {
  let copy: ProjectCopy;
  beforeEach(() => {
    copy = new ProjectCopy();
  });
  afterEach(() => copy.remove());

  it('refuses an upward import: the foundation importing a feature', async () => {
    const uuid = 'src/database/uuid.ts';
    copy.write(
      uuid,
      `import { EventsService } from '../events/events.service.js';\nexport const unused = EventsService;\n${copy.read(uuid)}`,
    );
    const result = await copy.run('node', [
      'node_modules/dependency-cruiser/bin/dependency-cruise.mjs',
      'src',
      '--config',
      '.dependency-cruiser.cjs',
    ]);
    expect(result.code).not.toBe(0);
    expect(result.output).toContain('foundation-knows-no-feature: src/database/uuid.ts → src/events/events.service.ts');
  });
});
