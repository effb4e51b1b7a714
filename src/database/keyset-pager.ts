import { Injectable } from '@nestjs/common';
import { CursorCodec } from './cursor-codec.js';
import { PreparedStatements } from './prepared-statements.js';
import { fetchPage, fetchPagesByParent, Page, PageReader, PageRequest, PageSource, SortKey } from './keyset.js';

/** Keyset pages (keyset.ts) read from the application's database as prepared statements, their cursors sealed by CursorCodec. */
@Injectable()
export class KeysetPager {
  private readonly reader: PageReader;

  constructor(statements: PreparedStatements, cursors: CursorCodec) {
    this.reader = { run: (sql, params) => statements.run(sql, params), cursors };
  }

  /** One page of a list. */
  page<T>(source: PageSource, key: SortKey, request: PageRequest, map: (row: Record<string, unknown>) => T): Promise<Page<T>> {
    return fetchPage(this.reader, source, key, request, map);
  }

  /** The same page of many lists, one per parent id, in one statement. */
  pagesByParent<T>(
    source: PageSource,
    parentSql: string,
    parentIds: readonly string[],
    key: SortKey,
    request: PageRequest,
    map: (row: Record<string, unknown>) => T,
  ): Promise<Map<string, Page<T>>> {
    return fetchPagesByParent(this.reader, source, parentSql, parentIds, key, request, map);
  }
}
