import type { Page, PageRequest } from '../database/keyset.js';

/** Arguments every connection field takes. */
export interface ConnectionArgs {
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
}

export function toPageRequest(args: ConnectionArgs): PageRequest {
  return {
    first: args.first ?? undefined,
    last: args.last ?? undefined,
    after: args.after ?? undefined,
    before: args.before ?? undefined,
  };
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
