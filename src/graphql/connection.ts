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

/** A Relay connection (`edges`, `nodes`, `pageInfo`) from a page, each item mapped to its GraphQL shape. */
export function toConnection<T, R>(page: Page<T>, map: (item: T) => R): Connection<R> {
  const edges = page.items.map((item) => ({ cursor: item.cursor, node: map(item.node) }));
  return {
    edges,
    nodes: edges.map((e) => e.node),
    pageInfo: {
      hasNextPage: page.hasNextPage,
      hasPreviousPage: page.hasPreviousPage,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges.at(-1)?.cursor ?? null,
    },
  };
}
