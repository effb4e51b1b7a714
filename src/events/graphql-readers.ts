import { Injectable } from '@nestjs/common';
import DataLoader from 'dataloader';
import type { Page } from '../database/keyset.js';
import { GraphqlContext, perRequest } from '../graphql/graphql-context.js';
import { EventsReader, EventsReaderFactory } from './events.reader.js';

/** The request's EventsReader, and DataLoaders that fetch one page of a nested list for many parents at once. */
@Injectable()
export class GraphqlReaders {
  constructor(private readonly factory: EventsReaderFactory) {}

  of(context: GraphqlContext): EventsReader {
    return perRequest(context, this.factory, () => this.factory.forPrincipal(context.principal));
  }

  /**
   * Loads `field`'s page for a parent, batched with every other parent asking for the same page in
   * this request (the same arguments), so a list of 50 events costs one statement for their pages.
   */
  page<T>(
    context: GraphqlContext,
    field: string,
    args: unknown,
    parentId: string,
    load: (parentIds: readonly string[]) => Promise<Map<string, Page<T>>>,
  ): Promise<Page<T>> {
    const loader = perRequest(
      context,
      `${field}:${JSON.stringify(args)}`,
      () =>
        new DataLoader<string, Page<T>>(async (ids) => {
          const pages = await load(ids);
          return ids.map((id) => pages.get(id)!);
        }),
    );
    return loader.load(parentId);
  }
}
