import {
  FieldNode,
  FragmentDefinitionNode,
  getArgumentValues,
  getDirectiveValues,
  getNamedType,
  getNullableType,
  GraphQLField,
  GraphQLIncludeDirective,
  GraphQLObjectType,
  GraphQLResolveInfo,
  GraphQLSchema,
  GraphQLSkipDirective,
  isListType,
  Kind,
  SchemaMetaFieldDef,
  SelectionNode,
  SelectionSetNode,
  TypeMetaFieldDef,
} from 'graphql';

/** Counting went past the ceiling: the caller needs no more precise a number. */
export class CostCeilingReached extends Error {
  constructor(readonly ceiling: number) {
    super(`Cost above ${ceiling}`);
  }
}

export const isIntrospectionRoot = (field: GraphQLField<unknown, unknown>): boolean =>
  field === SchemaMetaFieldDef || field === TypeMetaFieldDef;

/**
 * What the `__schema` and `__type` selections of one operation really build, counted on this schema:
 * 1 per field of the answer, `__typename` included, a list costing 1 plus each of its items (the paged
 * model, with the list's real length where a page has its page size). graphql-js's own introspection
 * resolvers give the values, so the count follows the answer exactly (`includeDeprecated`,
 * `@skip`/`@include`, fragments, aliases each paid again). Once the operation's introspection as a
 * whole is past `ceiling` it stops (CostCeilingReached), so the work done here is bounded by the
 * largest cost any caller may spend, whatever the document and however many roots it repeats.
 */
export class IntrospectionCounter {
  /** Counted so far over every root of the operation. */
  private cost = 0;
  /** Introspection resolvers read only `schema` from the resolve info (`possibleTypes`). */
  private readonly info: GraphQLResolveInfo;

  constructor(
    private readonly schema: GraphQLSchema,
    private readonly fragments: Map<string, FragmentDefinitionNode>,
    private readonly variables: Record<string, unknown>,
    private readonly ceiling: number,
  ) {
    this.info = { schema } as GraphQLResolveInfo;
  }

  /** The cost of one `__schema` or `__type` field. */
  count(node: FieldNode): number {
    const before = this.cost;
    this.field(node.name.value === SchemaMetaFieldDef.name ? SchemaMetaFieldDef : TypeMetaFieldDef, node, undefined);
    return this.cost - before;
  }

  private charge(points: number): void {
    this.cost += points;
    if (this.cost > this.ceiling) throw new CostCeilingReached(this.ceiling);
  }

  private field(field: GraphQLField<unknown, unknown>, node: FieldNode, source: unknown): void {
    this.charge(1);
    // A leaf is counted without being resolved: its value does not change what it costs.
    if (!node.selectionSet) return;
    const value: unknown = field.resolve?.(source, getArgumentValues(field, node, this.variables), undefined, this.info);
    if (value === null || value === undefined) return;
    const type = getNamedType(field.type) as GraphQLObjectType;
    const items = isListType(getNullableType(field.type)) ? (value as unknown[]) : [value];
    for (const item of items) if (item !== null && item !== undefined) this.selections(node.selectionSet, type, item);
  }

  private selections(set: SelectionSetNode, type: GraphQLObjectType, source: unknown): void {
    for (const selection of set.selections) {
      if (!this.included(selection)) continue;
      if (selection.kind === Kind.FIELD) {
        if (selection.name.value === '__typename') {
          this.charge(1);
          continue;
        }
        const field = type.getFields()[selection.name.value];
        if (field) this.field(field, selection, source);
        continue;
      }
      // Introspection types are object types implementing no interface: a fragment that validates
      // on one is either on that type or has no type condition.
      const fragment = selection.kind === Kind.INLINE_FRAGMENT ? selection : this.fragments.get(selection.name.value);
      if (fragment) this.selections(fragment.selectionSet, type, source);
    }
  }

  private included(selection: SelectionNode): boolean {
    if (!selection.directives?.length) return true;
    if (getDirectiveValues(GraphQLSkipDirective, selection, this.variables)?.if === true) return false;
    return getDirectiveValues(GraphQLIncludeDirective, selection, this.variables)?.if !== false;
  }
}
