import { buildSchema, execute, FieldNode, OperationDefinitionNode, parse } from 'graphql';
import { fragmentsOf } from './operation-analysis.js';
import { CostCeilingReached, IntrospectionCounter } from './introspection-cost.js';

const schema = buildSchema(`
  type Query { a: String, b: [B!]!, old: Int @deprecated }
  type B implements N { id: ID!, n: N }
  interface N { id: ID! }
  enum E { X Y Z @deprecated }
  input I { x: Int = 1 }
`);

/** Fields, and items of lists of objects, in an executed answer: the unit the cost counts. */
function answerSize(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + answerSize(item), 0);
  if (value === null || typeof value !== 'object') return 0;
  return Object.values(value).reduce((sum: number, child) => sum + 1 + answerSize(child), 0);
}

function counted(document: string, variables: Record<string, unknown> = {}, ceiling = Infinity): number {
  const ast = parse(document);
  const operation = ast.definitions[0] as OperationDefinitionNode;
  const counter = new IntrospectionCounter(schema, fragmentsOf(ast), variables, ceiling);
  return operation.selectionSet.selections.reduce((sum, root) => sum + counter.count(root as FieldNode), 0);
}

describe('IntrospectionCounter', () => {
  it.each([
    '{ __schema { types { name } } }',
    '{ __schema { types { name kind fields(includeDeprecated: true) { name type { kind name ofType { kind name } } } } } }',
    '{ a: __schema { queryType { name } } b: __schema { queryType { name __typename } } }',
    '{ __type(name: "E") { enumValues { name } all: enumValues(includeDeprecated: true) { name isDeprecated } } }',
    '{ n: __type(name: "N") { possibleTypes { name interfaces { name } } } i: __type(name: "I") { inputFields { name defaultValue } } }',
    '{ __type(name: "Nope") { name } }',
    '{ __schema { types { ...T ... on __Type { kind } } } } fragment T on __Type { name fields { name } }',
    '{ __schema { directives { name locations args { name type { name } } } } }',
  ])('counts what %s answers, field by field', (document) => {
    const answer = execute({ schema, document: parse(document) }) as { data: unknown };
    expect(counted(document)).toBe(answerSize(answer.data));
  });

  it('applies @skip and @include with the variables', () => {
    const document = 'query($on: Boolean!) { __schema { types @include(if: $on) { name } queryType @skip(if: $on) { name } } }';
    const types = Object.keys(schema.getTypeMap()).length;
    expect(counted(document, { on: true })).toBe(2 + types);
    expect(counted(document, { on: false })).toBe(3);
  });

  it('stops past the ceiling over all the roots of the operation', () => {
    const roots = Array.from({ length: 1000 }, (_, i) => `s${i}: __schema { types { name } }`).join(' ');
    expect(() => counted(`{ ${roots} }`, {}, 100)).toThrow(CostCeilingReached);
    expect(counted('{ __schema { types { name } } }', {}, 100)).toBeLessThan(100);
  });
});
