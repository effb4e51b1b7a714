import type { FastifyRequest } from 'fastify';
import { AuthError } from '../auth/auth.errors.js';
import { Principal } from '../auth/principal.js';
import type { RequestBudget } from '../rate-limits/rate-limits.service.js';

/** The context every resolver receives. */
export interface GraphqlContext {
  req: FastifyRequest;
  principal: Principal | null;
  /**
   * Filled when the operation policy refuses the operation; GraphqlController answers it over HTTP.
   * An object, because Apollo hands plugins a shallow copy of the context.
   */
  policy: { denial?: AuthError };
  /**
   * The request's rate-limit budget, charged by OperationPolicyPlugin with the operation's cost; absent
   * where a context is made without an HTTP request.
   */
  budget?: RequestBudget;
  /** Objects that live as long as the request, such as DataLoaders; see `perRequest`. */
  scope: Map<unknown, unknown>;
}

/**
 * The request's instance of something, made on first use: DataLoaders batch and cache within one
 * request only, so one user's data never serves another.
 */
export function perRequest<T>(context: GraphqlContext, key: unknown, create: () => T): T {
  let value = context.scope.get(key) as T | undefined;
  if (value === undefined) {
    value = create();
    context.scope.set(key, value);
  }
  return value;
}
