import {
  DocumentNode,
  FragmentDefinitionNode,
  getNamedType,
  getVariableValues,
  GraphQLSchema,
  OperationDefinitionNode,
  SelectionSetNode,
} from 'graphql';
import { getComplexity, ComplexityEstimator, simpleEstimator } from 'graphql-query-complexity';
import { DEFAULT_PAGE_SIZE } from '../database/keyset.js';

export function fragmentsOf(document: DocumentNode): Map<string, FragmentDefinitionNode> {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const def of document.definitions) if (def.kind === 'FragmentDefinition') fragments.set(def.name.value, def);
  return fragments;
}

/** Names of the root fields an operation selects, through fragments and inline fragments. */
export function rootFieldNames(operation: OperationDefinitionNode, fragments: Map<string, FragmentDefinitionNode>): Set<string> {
  const names = new Set<string>();
  const visit = (set: SelectionSetNode, seen: Set<string>): void => {
    for (const selection of set.selections) {
      if (selection.kind === 'Field') names.add(selection.name.value);
      else if (selection.kind === 'InlineFragment') visit(selection.selectionSet, seen);
      else if (!seen.has(selection.name.value)) {
        const fragment = fragments.get(selection.name.value);
        if (fragment) visit(fragment.selectionSet, new Set([...seen, selection.name.value]));
      }
    }
  };
  visit(operation.selectionSet, new Set());
  return names;
}

export const isMetaField = (name: string): boolean => name.startsWith('__');

/**
 * Deepest field nesting of the operation, not counting introspection (graphql-js bounds that with
 * its own MaxIntrospectionDepthRule).
 */
export function operationDepth(operation: OperationDefinitionNode, fragments: Map<string, FragmentDefinitionNode>): number {
  const depthOf = (set: SelectionSetNode, seen: Set<string>): number => {
    let max = 0;
    for (const selection of set.selections) {
      if (selection.kind === 'Field') {
        if (isMetaField(selection.name.value)) continue;
        max = Math.max(max, 1 + (selection.selectionSet ? depthOf(selection.selectionSet, seen) : 0));
      } else if (selection.kind === 'InlineFragment') {
        max = Math.max(max, depthOf(selection.selectionSet, seen));
      } else if (!seen.has(selection.name.value)) {
        const fragment = fragments.get(selection.name.value);
        if (fragment) max = Math.max(max, depthOf(fragment.selectionSet, new Set([...seen, selection.name.value])));
      }
    }
    return max;
  };
  return depthOf(operation.selectionSet, new Set());
}

/**
 * Fields returning pages (`first`/`last` arguments, or a connection's default page size) cost their
 * page size times what each item costs;
 * every other field costs 1 plus its children. Introspection is free.
 */
const pagedEstimator: ComplexityEstimator = ({ args, childComplexity, field }) => {
  if (field.name.startsWith('__')) return 0;
  const isConnection = getNamedType(field.type).name.endsWith('Connection');
  const size = Number(args.first ?? args.last ?? (isConnection ? DEFAULT_PAGE_SIZE : NaN));
  return Number.isFinite(size) && size > 0 ? 1 + size * childComplexity : undefined;
};

/** The cost, or undefined when the variables do not fit the operation (execution will report that). */
export function operationCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | undefined,
  variables: Record<string, unknown> | undefined,
): number | undefined {
  const operation = document.definitions.find(
    (d): d is OperationDefinitionNode =>
      d.kind === 'OperationDefinition' && (operationName === undefined || d.name?.value === operationName),
  );
  if (operation && getVariableValues(schema, operation.variableDefinitions ?? [], variables ?? {}).errors) return undefined;
  return getComplexity({
    schema,
    query: document,
    operationName,
    variables,
    estimators: [pagedEstimator, simpleEstimator({ defaultComplexity: 1 })],
  });
}
