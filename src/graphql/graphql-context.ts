import type { FastifyRequest } from 'fastify';
import { AuthError } from '../auth/auth.errors.js';
import { Principal } from '../auth/principal.js';

/** The context every resolver receives. */
export interface GraphqlContext {
  req: FastifyRequest;
  principal: Principal | null;
  /**
   * Filled when the operation policy refuses the operation; GraphqlController answers it over HTTP.
   * An object, because Apollo hands plugins a shallow copy of the context.
   */
  policy: { denial?: AuthError };
}
