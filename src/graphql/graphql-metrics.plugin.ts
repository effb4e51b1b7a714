import { ApolloServerPlugin, GraphQLRequestListener } from '@apollo/server';
import { Injectable } from '@nestjs/common';
import { Metrics } from '../metrics/metrics.js';
import { GraphqlContext } from './graphql-context.js';

/** Distinct operation names given their own label value; later names count as `other`. */
const MAX_OPERATION_NAMES = 100;

/**
 * Counts and times every GraphQL operation by name and type. Names come from clients, so the label
 * stays bounded: `anonymous` for an unnamed operation, `unknown` when none was resolved (a document that
 * did not parse or validate), and after MAX_OPERATION_NAMES distinct names, `other`. One timestamp and
 * one counter and histogram update per operation; nothing per field.
 */
@Injectable()
export class GraphqlMetricsPlugin implements ApolloServerPlugin<GraphqlContext> {
  private readonly names = new Set<string>();

  constructor(private readonly metrics: Metrics) {}

  async requestDidStart(): Promise<GraphQLRequestListener<GraphqlContext>> {
    const startedAt = performance.now();
    let operation = 'unknown';
    let type = 'unknown';
    let errored = false;
    return {
      didResolveOperation: async ({ operation: resolved }) => {
        if (!resolved) return;
        type = resolved.operation;
        operation = this.label(resolved.name?.value);
      },
      didEncounterErrors: async () => {
        errored = true;
      },
      willSendResponse: async () => {
        this.metrics.graphqlOperation(operation, type, errored, (performance.now() - startedAt) / 1000);
      },
    };
  }

  private label(name: string | undefined): string {
    if (!name) return 'anonymous';
    if (this.names.has(name)) return name;
    if (this.names.size >= MAX_OPERATION_NAMES) return 'other';
    this.names.add(name);
    return name;
  }
}
