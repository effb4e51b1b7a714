import {
  DocumentNode,
  FragmentDefinitionNode,
  getNamedType,
  getVariableValues,
  GraphQLSchema,
  OperationDefinitionNode,
  SelectionSetNode,
} from 'graphql';
import { directiveEstimator, getComplexity, ComplexityEstimator, simpleEstimator } from 'graphql-query-complexity';
import { DEFAULT_PAGE_SIZE } from '../database/keyset.js';
import { CostCeilingReached, IntrospectionCounter, isIntrospectionRoot } from './introspection-cost.js';
import { MAX_NESTING, MAX_SELECTIONS, QueryLimitError } from './query-limits.js';

export function fragmentsOf(document: DocumentNode): Map<string, FragmentDefinitionNode> {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const def of document.definitions) if (def.kind === 'FragmentDefinition') fragments.set(def.name.value, def);
  return fragments;
}

export const isMetaField = (name: string): boolean => name.startsWith('__');

export interface OperationShape {
  /** Names of the root fields, through fragments and inline fragments. */
  rootFields: Set<string>;
  /** Deepest field nesting, not counting introspection (graphql-js bounds that with MaxIntrospectionDepthRule). */
  depth: number;
}

/**
 * Root fields and depth of an operation, in one walk that counts every selection it visits, a
 * fragment's each time it is spread: past MAX_SELECTIONS it stops and refuses the operation, so a
 * few fragments that each spread the next twice cannot make this (or anything after it) take
 * exponential time. A fragment spread inside a fragment nests like brackets do, so selection sets
 * nested past MAX_NESTING are refused too: the cost analysis after this recurses once per level.
 * Iterative, so no document can exhaust the stack here.
 */
export function measureOperation(operation: OperationDefinitionNode, fragments: Map<string, FragmentDefinitionNode>): OperationShape {
  const rootFields = new Set<string>();
  let depth = 0;
  let selections = 0;
  // `depth`: of the field owning the set; `nesting`: selection sets open, the operation's own included;
  // `meta`: inside introspection; `root`: no field above.
  const pending: { set: SelectionSetNode; depth: number; nesting: number; meta: boolean; root: boolean }[] = [
    { set: operation.selectionSet, depth: 0, nesting: 1, meta: false, root: true },
  ];
  for (let item = pending.pop(); item; item = pending.pop()) {
    if (item.nesting > MAX_NESTING) throw QueryLimitError.nestedTooDeep();
    const nesting = item.nesting + 1;
    for (const selection of item.set.selections) {
      if (++selections > MAX_SELECTIONS) throw QueryLimitError.tooManySelections();
      if (selection.kind === 'Field') {
        const meta = item.meta || isMetaField(selection.name.value);
        if (item.root) rootFields.add(selection.name.value);
        const fieldDepth = meta ? item.depth : item.depth + 1;
        depth = Math.max(depth, fieldDepth);
        if (selection.selectionSet) pending.push({ set: selection.selectionSet, depth: fieldDepth, nesting, meta, root: false });
      } else {
        const set = selection.kind === 'InlineFragment' ? selection.selectionSet : fragments.get(selection.name.value)?.selectionSet;
        if (set) pending.push({ ...item, set, nesting });
      }
    }
  }
  return { rootFields, depth };
}

/**
 * What the server builds for an operation, in points. Fields returning pages (`first`/`last`
 * arguments, or a connection's default page size) cost 1 plus their page size times what each item
 * costs; every other field, `__typename` and each aliased copy included, costs 1 plus its children.
 * A field marked `@complexity(value: N)` in the schema (long texts) costs N. `__schema` and `__type`
 * cost what their answer really holds on this schema (introspection-cost.ts).
 * A field selected twice under one name is answered once but paid twice: the count stays an upper bound.
 */
function pagedEstimator(introspection: IntrospectionCounter): ComplexityEstimator {
  return ({ args, childComplexity, field, node, type }) => {
    if (isIntrospectionRoot(field)) return introspection.count(node);
    // Inside `__schema`/`__type`, counted above.
    if (isMetaField(type.name)) return 0;
    const isConnection = getNamedType(field.type).name.endsWith('Connection');
    const size = Number(args.first ?? args.last ?? (isConnection ? DEFAULT_PAGE_SIZE : NaN));
    return Number.isFinite(size) && size > 0 ? 1 + size * childComplexity : undefined;
  };
}

export interface CostCount {
  cost: number;
  /** False when counting stopped past the ceiling: the cost is then at least `cost`. */
  complete: boolean;
}

/** Fields of long text cost what the schema says (`@complexity(value: N)`: up to N thousand characters). */
const TEXT_ESTIMATOR = directiveEstimator({ name: 'complexity' });

/**
 * The cost, or undefined when the variables do not fit the operation (execution will report that).
 * Counting introspection stops past `ceiling` (the largest cost limit): the count is then
 * `ceiling + 1` and incomplete, a cost refused whoever asks.
 */
export function countOperationCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | undefined,
  variables: Record<string, unknown> | undefined,
  ceiling = Infinity,
): CostCount | undefined {
  const operation = document.definitions.find(
    (d): d is OperationDefinitionNode =>
      d.kind === 'OperationDefinition' && (operationName === undefined || d.name?.value === operationName),
  );
  const coerced = getVariableValues(schema, operation?.variableDefinitions ?? [], variables ?? {});
  if (coerced.errors) return undefined;
  const introspection = new IntrospectionCounter(schema, fragmentsOf(document), coerced.coerced, ceiling);
  try {
    const cost = getComplexity({
      schema,
      query: document,
      operationName,
      variables,
      estimators: [pagedEstimator(introspection), TEXT_ESTIMATOR, simpleEstimator({ defaultComplexity: 1 })],
      // measureOperation has refused anything larger; the library's own refusal would be a bare GraphQLError.
      maxQueryNodes: MAX_SELECTIONS + 1,
    });
    return { cost, complete: true };
  } catch (error) {
    if (error instanceof CostCeilingReached) return { cost: error.ceiling + 1, complete: false };
    throw error;
  }
}

/** The cost alone, counted completely. */
export function operationCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | undefined,
  variables: Record<string, unknown> | undefined,
): number | undefined {
  return countOperationCost(schema, document, operationName, variables)?.cost;
}
