import { buildSchema } from 'graphql';
import { requireRootResolvers, rootFieldsOf } from './root-resolvers.js';

function schemaWith(resolved: string[]) {
  const schema = buildSchema(`
    type Query { events: Int, orphan: Int! }
    type Mutation { createEvent: Int }
  `);
  for (const name of resolved) {
    const [type, field] = name.split('.') as [string, string];
    const root = type === 'Query' ? schema.getQueryType() : schema.getMutationType();
    root!.getFields()[field]!.resolve = () => 1;
  }
  return schema;
}

describe('requireRootResolvers', () => {
  it('accepts a schema whose every root field has a resolver', () => {
    expect(() => requireRootResolvers(schemaWith(['Query.events', 'Query.orphan', 'Mutation.createEvent']))).not.toThrow();
  });

  it('refuses a schema with a query or mutation no resolver answers, naming each', () => {
    expect(() => requireRootResolvers(schemaWith(['Query.events']))).toThrow(
      /^GraphQL root fields without a resolver: Query\.orphan, Mutation\.createEvent\. Each is declared in a src\/<feature>\/\*\.graphql file/,
    );
  });

  it('lists the root fields of each operation type', () => {
    expect(rootFieldsOf(schemaWith(['Mutation.createEvent']))).toEqual([
      { type: 'Query', field: 'events', resolved: false },
      { type: 'Query', field: 'orphan', resolved: false },
      { type: 'Mutation', field: 'createEvent', resolved: true },
    ]);
  });
});
