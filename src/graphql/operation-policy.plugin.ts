import { ApolloServerPlugin, GraphQLRequestContextDidResolveOperation, GraphQLRequestListener } from '@apollo/server';
import { Inject, Injectable } from '@nestjs/common';
import {
  ASTNode,
  DocumentNode,
  getIntrospectionQuery,
  getVariableValues,
  GraphQLError,
  GraphQLSchema,
  Kind,
  OperationDefinitionNode,
  parse,
  visit,
} from 'graphql';
import { AuthError } from '../auth/auth.errors.js';
import { hasAnyScope } from '../auth/principal.js';
import { APP_CONFIG } from '../config/config.module.js';
import { COST_PER_RATE_LIMIT_POINT, type AppConfig } from '../config/config.schema.js';
import { Metrics } from '../metrics/metrics.js';
import type { RequestBudget } from '../rate-limits/rate-limits.service.js';
import { GraphqlContext } from './graphql-context.js';
import { CostCount, countOperationCost, fragmentsOf, isMetaField, measureOperation, operationCost } from './operation-analysis.js';
import { PublicFieldsRegistry } from './public-fields.registry.js';
import { RATE_LIMITED_CODE } from './graphql-errors.js';
import { QueryLimitError } from './query-limits.js';

const QUERY_SCOPES = ['api', 'read_api'];
const MUTATION_SCOPES = ['api'];

/** The scopes a token needs (any one of them) for an operation of this type, on public root fields too. */
export function requiredScopes(rootType: 'Query' | 'Mutation' | 'Subscription'): readonly string[] {
  return rootType === 'Query' ? QUERY_SCOPES : MUTATION_SCOPES;
}

interface OperationAnalysis {
  rootType: 'Query' | 'Mutation' | 'Subscription';
  /** Root fields other than introspection (`__schema`, `__typename`…). */
  dataFields: string[];
  /** Whether a root field is `__schema` or `__type`. */
  introspects: boolean;
  depth: number;
  /** Undefined when the variables do not fit; the operation then fails in execution, unrun. */
  cost: CostCount | undefined;
}

/** What does not depend on the variables, and the costs seen so far by the values of those that count. */
interface CachedOperation {
  shape: Omit<OperationAnalysis, 'cost'>;
  /** The variables the cost depends on: page sizes (`first`, `last`) and `@skip`/`@include` conditions. */
  costVariables: string[];
  /** The whole analysis by the values of the cost variables (read-only: shared by the requests that repeat them). */
  costs: Map<string, Readonly<OperationAnalysis>>;
}

/** graphql-js's standard introspection query with every option: what GraphiQL and code generators send. */
const STANDARD_INTROSPECTION = parse(
  getIntrospectionQuery({
    descriptions: true,
    specifiedByUrl: true,
    directiveIsRepeatable: true,
    schemaDescription: true,
    inputValueDeprecation: true,
    oneOf: true,
  }),
);

/** Costs kept per operation, by the values of its cost variables (a client paging through a list repeats them). */
const MAX_COSTS_PER_OPERATION = 32;

/** What an operation of this cost spends of its caller's rate-limit budget. */
export function rateLimitPoints(cost: number | undefined): number {
  return Math.max(1, Math.ceil((cost ?? 0) / COST_PER_RATE_LIMIT_POINT));
}

/**
 * Decides, after parsing and validation and before any resolver runs, whether the operation may run:
 * anonymous callers only for operations made of @Public() root fields, tokens only with the scope the
 * operation type needs, and every caller within the selection, depth and cost limits (query-limits.ts;
 * GraphqlController holds the document to the token and nesting limits before Apollo parses it). Then
 * it charges the operation's cost to the caller's rate-limit budget.
 */
@Injectable()
export class OperationPolicyPlugin implements ApolloServerPlugin<GraphqlContext> {
  private readonly analyses = new WeakMap<DocumentNode, Map<string, CachedOperation>>();
  /** Costs are kept for every caller: counting stops past the largest limit, which refuses them all. */
  private readonly costCeiling: number;
  private readonly introspectionAllowances = new WeakMap<GraphQLSchema, number>();

  constructor(
    private readonly publicFields: PublicFieldsRegistry,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: Metrics,
  ) {
    this.costCeiling = Math.max(config.graphql.limits.authenticated.maxCost, config.graphql.limits.anonymous.maxCost);
  }

  /** One listener for every request (it keeps nothing per request), given as one settled promise. */
  private readonly listener: Promise<GraphQLRequestListener<GraphqlContext>> = Promise.resolve({
    didResolveOperation: (requestContext) => this.decide(requestContext),
  });

  requestDidStart(): Promise<GraphQLRequestListener<GraphqlContext>> {
    return this.listener;
  }

  /**
   * Refuses the operation (throws) or lets it run, charging its cost. Returns a promise only when the
   * charge needs one (rate-limit counters in Redis).
   */
  private decide({
    operation,
    document,
    contextValue,
    schema,
    request,
  }: GraphQLRequestContextDidResolveOperation<GraphqlContext>): Promise<void> {
    if (!operation) return SETTLED; // Apollo itself answers a request whose operation cannot be chosen.
    const analysis = this.analyse(schema, document, operation, request.variables);
    const { principal } = contextValue;

    let denial: AuthError | undefined;
    if (!principal) {
      if (analysis.dataFields.some((field) => !this.publicFields.isPublic(analysis.rootType, field))) {
        denial = AuthError.missingCredentials();
      }
    } else if (analysis.dataFields.length > 0) {
      const needed = requiredScopes(analysis.rootType);
      if (!hasAnyScope(principal, needed)) denial = AuthError.insufficientScope(needed);
    }
    if (denial) {
      this.metrics.apiAuthRefused(denial.reason);
      contextValue.policy.denial = denial;
      throw new GraphQLError(denial.message, { extensions: { code: denial.code, http: { status: denial.status } } });
    }

    const limits = principal ? this.config.graphql.limits.authenticated : this.config.graphql.limits.anonymous;
    if (analysis.depth > limits.maxDepth) throw QueryLimitError.tooDeep(analysis.depth, limits.maxDepth);
    // Introspection alone is priced apart: every caller may read the whole schema once per document.
    const maxCost =
      analysis.introspects && analysis.dataFields.length === 0
        ? Math.max(limits.maxCost, this.introspectionAllowance(schema))
        : limits.maxCost;
    if (analysis.cost && analysis.cost.cost > maxCost) throw QueryLimitError.tooCostly(analysis.cost.cost, maxCost, analysis.cost.complete);

    const budget = contextValue.budget;
    if (!budget) return SETTLED;
    const pending = budget.charge(rateLimitPoints(analysis.cost?.cost));
    if (pending) return pending.then(() => refuseIfSpent(budget));
    refuseIfSpent(budget);
    return SETTLED;
  }

  /**
   * The most an operation made of introspection alone (`__schema`, `__type`, `__typename`) may cost,
   * whoever asks: what the standard introspection query (graphql-js's, with every option) costs on this
   * schema, so tools can always introspect it whole, however the schema grows; never past the largest
   * limit. Its answer is the schema, the same for everyone; repeating it (aliases) is refused as before.
   */
  private introspectionAllowance(schema: GraphQLSchema): number {
    let allowance = this.introspectionAllowances.get(schema);
    if (allowance === undefined) {
      allowance = Math.min(this.costCeiling, operationCost(schema, STANDARD_INTROSPECTION, undefined, undefined) ?? 0);
      this.introspectionAllowances.set(schema, allowance);
    }
    return allowance;
  }

  /**
   * What the policy needs to know of an operation. Apollo hands over the same DocumentNode for a
   * repeated query text, so the analysis is kept per document: its shape once, its cost per value of
   * the variables that change it (the others, such as a cursor, do not).
   */
  private analyse(
    schema: GraphQLSchema,
    document: DocumentNode,
    operation: OperationDefinitionNode,
    variables: Record<string, unknown> | undefined,
  ): OperationAnalysis {
    const key = operation.name?.value ?? '';
    let perDocument = this.analyses.get(document);
    let cached = perDocument?.get(key);
    if (!cached) {
      const fragments = fragmentsOf(document);
      const rootType = operation.operation === 'query' ? 'Query' : operation.operation === 'mutation' ? 'Mutation' : 'Subscription';
      const { rootFields, depth } = measureOperation(operation, fragments); // first: it bounds the work of the rest
      cached = {
        shape: {
          rootType,
          dataFields: [...rootFields].filter((name) => !isMetaField(name)),
          introspects: rootFields.has('__schema') || rootFields.has('__type'),
          depth,
        },
        costVariables: costVariables(document),
        costs: new Map(),
      };
      if (!perDocument) this.analyses.set(document, (perDocument = new Map()));
      perDocument.set(key, cached);
    }
    if (operation.variableDefinitions?.length && getVariableValues(schema, operation.variableDefinitions, variables ?? {}).errors) {
      return { ...cached.shape, cost: undefined };
    }
    // No cost variables (most operations): one key, and the analysis itself kept, not copied per request.
    const costKey = cached.costVariables.length === 0 ? '' : JSON.stringify(cached.costVariables.map((name) => variables?.[name]));
    let analysis = cached.costs.get(costKey);
    if (analysis === undefined) {
      const cost = countOperationCost(schema, document, operation.name?.value, variables, this.costCeiling);
      analysis = { ...cached.shape, cost };
      if (cost !== undefined && cached.costs.size < MAX_COSTS_PER_OPERATION) cached.costs.set(costKey, analysis);
    }
    return analysis;
  }
}

const SETTLED = Promise.resolve();

/** GraphqlController answers the refusal (429, Retry-After); this stops the operation from running. */
function refuseIfSpent(budget: RequestBudget): void {
  if (budget.refusal) throw new GraphQLError(budget.refusal.message, { extensions: { code: RATE_LIMITED_CODE, http: { status: 429 } } });
}

/**
 * Variables that can change an operation's cost: page sizes and the conditions of `@skip`/`@include`,
 * and any argument of a document that introspects (`__type(name:)`, `includeDeprecated`…).
 */
function costVariables(document: DocumentNode): string[] {
  const names = new Set<string>();
  let introspects = false;
  visit(document, {
    Field(field) {
      if (field.name.value === '__schema' || field.name.value === '__type') introspects = true;
    },
    Argument(argument, _key, _parent, _path, ancestors) {
      if (argument.value.kind !== Kind.VARIABLE) return;
      const owner = ancestors[ancestors.length - 1] as ASTNode | readonly ASTNode[];
      const inDirective = !Array.isArray(owner) && (owner as ASTNode).kind === Kind.DIRECTIVE;
      if (inDirective || argument.name.value === 'first' || argument.name.value === 'last') names.add(argument.value.name.value);
    },
  });
  if (introspects) visit(document, { Variable: (variable) => void names.add(variable.name.value) });
  return [...names].sort();
}
