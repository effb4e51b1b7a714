/**
 * How a resolver class is tied to the generated schema types (src/generated/graphql.ts, graphql-resolvers.ts):
 *
 *   @Resolver('Event')
 *   export class EventsResolver implements FieldResolvers<G.EventResolvers, G.Event, GqlEvent, 'organizer' | 'phase'> {
 *
 * - each listed field must be a method whose parent, arguments and result match the schema (the
 *   generated `Resolver` signature: parent, args, context, info);
 * - every other field of the GraphQL type must be a property of the parent (the domain object the
 *   mapper hands over), so a field added to a `.graphql` file that nothing resolves fails the type-check
 *   with `unresolvedFields` naming it.
 * Query and Mutation use `RootResolvers`, which only checks the methods it lists.
 */
export type FieldResolvers<R, GraphqlType, Parent, K extends keyof R> = RootResolvers<R, K> &
  (Unresolved<GraphqlType, Parent, K> extends never ? unknown : { unresolvedFields: Unresolved<GraphqlType, Parent, K> });

/** The listed resolver methods, typed by the generated resolvers type `R`. */
export type RootResolvers<R, K extends keyof R> = { [P in K]-?: NonNullable<R[P]> };

type Unresolved<GraphqlType, Parent, K> = Exclude<keyof GraphqlType, '__typename' | keyof Parent | K>;
