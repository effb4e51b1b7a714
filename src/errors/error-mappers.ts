import { Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** Answers an error and returns true, or returns false to leave it to the next mapper. */
export type ErrorMapper = (error: unknown, request: FastifyRequest, reply: FastifyReply) => boolean;

/**
 * What features contribute, at module init, to the global FallbackExceptionFilter: the errors that reach
 * it because no controller filter of theirs could see them. Those are raised before a handler runs
 * (Fastify's refusal of a body, a method an address does not have, an address no route has) or by a
 * controller without a filter of its own (AuthGuard's 401 on any route). Each mapper claims its own
 * errors (an error class, or its feature's addresses) so that their order does not matter.
 */
@Injectable()
export class ErrorMappers {
  private readonly mappers: ErrorMapper[] = [];

  register(mapper: ErrorMapper): void {
    this.mappers.push(mapper);
  }

  answer(error: unknown, request: FastifyRequest, reply: FastifyReply): boolean {
    return this.mappers.some((mapper) => mapper(error, request, reply));
  }
}
