import type { Page } from '../database/keyset.js';
import { toConnection } from './connection.js';

/** A page whose cursors count how often they are sealed (each one an HMAC in the real pager). */
function pageOf(values: number[]): { page: Page<number>; sealed: () => number } {
  let sealed = 0;
  const items = values.map((node) => ({
    node,
    get cursor() {
      sealed++;
      return `c${node}`;
    },
  }));
  return { page: { items, hasNextPage: true, hasPreviousPage: false }, sealed: () => sealed };
}

describe('toConnection', () => {
  it('maps each item once, shared by nodes and edges, and seals no cursor that is not read', () => {
    const { page, sealed } = pageOf([1, 2, 3]);
    let mapped = 0;
    const connection = toConnection(page, (n) => ({ n, serial: ++mapped }));
    expect(connection.nodes.map((x) => x.n)).toEqual([1, 2, 3]);
    expect(mapped).toBe(3);
    expect(sealed()).toBe(0);

    expect(connection.edges.map((e) => e.node)).toEqual(connection.nodes);
    expect(connection.edges[1]!.node).toBe(connection.nodes[1]);
    expect(connection.edges).toBe(connection.edges); // built once
    expect(mapped).toBe(3);
    expect(sealed()).toBe(0);

    expect(connection.edges.map((e) => e.cursor)).toEqual(['c1', 'c2', 'c3']);
    expect(connection.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false, startCursor: 'c1', endCursor: 'c3' });
  });

  it('gives null cursors for an empty page', () => {
    const connection = toConnection(pageOf([]).page, (n) => n);
    expect(connection.edges).toEqual([]);
    expect(connection.nodes).toEqual([]);
    expect(connection.pageInfo.startCursor).toBeNull();
    expect(connection.pageInfo.endCursor).toBeNull();
  });
});
