import type { Page, PageRequest } from '../database/keyset.js';

type Paging = { first?: number | null; after?: string | null; last?: number | null; before?: string | null };

/**
 * The arguments of a connection field as generated from its `.graphql` declaration (`G.QueryEventsArgs`…),
 * when they declare every one of `keys`. Each paging argument is optional, so a generated type that lost
 * one (renamed in the schema) would still fit a plain `{ first?, after? … }` and the renamed argument
 * would be dropped silently: this type names the missing ones instead, and the type-check fails.
 */
export type ConnectionArgs<A, K extends keyof Paging> = [K] extends [keyof A] ? A : { missingPagingArguments: Exclude<K, keyof A> };

/** The page a connection field asks for, from its generated arguments: `first`, `after`, `last` and `before`. */
export function toPageRequest<A extends Paging>(args: A & ConnectionArgs<A, keyof Paging>): PageRequest {
  return {
    first: args.first ?? undefined,
    last: args.last ?? undefined,
    after: args.after ?? undefined,
    before: args.before ?? undefined,
  };
}

/** The page a forward-only connection field asks for (`first` and `after`, no `last` nor `before`). */
export function toForwardPageRequest<A extends Pick<Paging, 'first' | 'after'>>(
  args: A & ConnectionArgs<A, 'first' | 'after'>,
): PageRequest {
  return { first: args.first ?? undefined, after: args.after ?? undefined };
}
export interface Connection<T> {
  edges: { cursor: string; node: T }[];
  nodes: T[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
}

/**
 * A Relay connection (`edges`, `nodes`, `pageInfo`) from a page, each item mapped to its GraphQL shape.
 * Edges are built only if the operation selects them (most clients read `nodes`), and cursors are
 * getters, so only those the operation selects are sealed (an HMAC each).
 */
export function toConnection<T, R>(page: Page<T>, map: (item: T) => R): Connection<R> {
  const { items } = page;
  const nodes = items.map((item) => map(item.node));
  let edges: Connection<R>['edges'] | undefined;
  return {
    get edges() {
      return (edges ??= items.map((item, i) => ({
        node: nodes[i]!,
        get cursor() {
          return item.cursor;
        },
      })));
    },
    nodes,
    pageInfo: {
      hasNextPage: page.hasNextPage,
      hasPreviousPage: page.hasPreviousPage,
      get startCursor() {
        return items[0]?.cursor ?? null;
      },
      get endCursor() {
        return items.at(-1)?.cursor ?? null;
      },
    },
  };
}
