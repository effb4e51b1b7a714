import { ApolloServerPlugin, GraphQLRequestContextDidResolveOperation, GraphQLRequestListener } from '@apollo/server';
import type { OperationDefinitionNode } from 'graphql';
import { Injectable } from '@nestjs/common';
import { GraphqlOperationSeries, Metrics } from '../metrics/metrics.js';
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
  private readonly byOperation = new WeakMap<OperationDefinitionNode, GraphqlOperationSeries>();
  private unknown?: GraphqlOperationSeries;

  constructor(private readonly metrics: Metrics) {}

  // Not async functions: the listener's hooks return one settled promise, made once, rather than a new one per call.
  requestDidStart(): Promise<GraphQLRequestListener<GraphqlContext>> {
    return Promise.resolve(new OperationRecord(this, performance.now()));
  }

  /** The series of an operation, kept with its definition (the same object for a repeated document). */
  seriesOf(operation: OperationDefinitionNode | null | undefined): GraphqlOperationSeries {
    if (!operation) return (this.unknown ??= this.metrics.graphqlOperationSeries('unknown', 'unknown'));
    let series = this.byOperation.get(operation);
    if (!series)
      this.byOperation.set(
        operation,
        (series = this.metrics.graphqlOperationSeries(this.label(operation.name?.value), operation.operation)),
      );
    return series;
  }

  private label(name: string | undefined): string {
    if (!name) return 'anonymous';
    if (this.names.has(name)) return name;
    if (this.names.size >= MAX_OPERATION_NAMES) return 'other';
    this.names.add(name);
    return name;
  }
}

/** One request's listener: the operation's series once resolved, whether errors were met, and its duration at the response. */
class OperationRecord implements GraphQLRequestListener<GraphqlContext> {
  private series?: GraphqlOperationSeries;
  private errored = false;

  constructor(
    private readonly plugin: GraphqlMetricsPlugin,
    private readonly startedAt: number,
  ) {}

  didResolveOperation({ operation }: GraphQLRequestContextDidResolveOperation<GraphqlContext>): Promise<void> {
    this.series = this.plugin.seriesOf(operation);
    return DONE;
  }

  didEncounterErrors(): Promise<void> {
    this.errored = true;
    return DONE;
  }

  willSendResponse(): Promise<void> {
    const series = this.series ?? this.plugin.seriesOf(undefined);
    (this.errored ? series.error : series.ok).value++;
    series.duration.observe((performance.now() - this.startedAt) / 1000);
    return DONE;
  }
}

const DONE = Promise.resolve();
