import type { GraphQLSchema } from 'graphql';

/** The root fields (`Query.events`, `Mutation.createEvent`…) of the schema, each with whether a resolver is bound to it. */
export function rootFieldsOf(schema: GraphQLSchema): { type: 'Query' | 'Mutation' | 'Subscription'; field: string; resolved: boolean }[] {
  const roots = [
    ['Query', schema.getQueryType()],
    ['Mutation', schema.getMutationType()],
    ['Subscription', schema.getSubscriptionType()],
  ] as const;
  return roots.flatMap(([type, root]) =>
    Object.values(root?.getFields() ?? {}).map((field) => ({
      type,
      field: field.name,
      resolved: field.resolve !== undefined || ('subscribe' in field && field.subscribe !== undefined),
    })),
  );
}

/**
 * Refuses to serve a schema with a root field that no resolver answers. graphql-js would resolve it from
 * the root value, which is empty: every call would answer null, or "Internal server error" for a non-null
 * field. The type-check cannot see it (root resolvers are listed, not derived from the schema), so the
 * service stops at start-up, naming each one.
 */
export function requireRootResolvers(schema: GraphQLSchema): void {
  const unresolved = rootFieldsOf(schema).filter((f) => !f.resolved);
  if (unresolved.length === 0) return;
  const names = unresolved.map((f) => `${f.type}.${f.field}`).join(', ');
  throw new Error(
    `GraphQL root field${unresolved.length === 1 ? '' : 's'} without a resolver: ${names}. Each is declared in a ` +
      `src/<feature>/*.graphql file: bind it with @Query('name') or @Mutation('name') on a resolver of a module ` +
      `that AppModule imports, or remove it from the schema.`,
  );
}
