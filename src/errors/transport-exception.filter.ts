import { ArgumentsHost, ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { answerGenerically } from './generic-errors.js';

/**
 * A transport's exception filter (OAuth, GraphQL over HTTP, the legacy REST API, pages): it answers the
 * errors its protocol has words for and leaves every other one to the generic mapping. Applied to the
 * transport's controllers with `@UseFilters`; `answer` is also what a feature registers with
 * ErrorMappers for errors raised at its addresses before a handler runs.
 */
export abstract class TransportExceptionFilter implements ExceptionFilter {
  catch(error: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    this.answer(error, http.getRequest<FastifyRequest>(), http.getResponse<FastifyReply>());
  }

  answer(error: unknown, request: FastifyRequest, reply: FastifyReply): void {
    if (reply.sent) return;
    if (!this.answerInProtocol(error, request, reply)) this.answerOtherwise(error, request, reply);
  }

  /** Answers the error in the transport's own shape and returns true, or returns false to leave it. */
  protected abstract answerInProtocol(error: unknown, request: FastifyRequest, reply: FastifyReply): boolean;

  protected answerOtherwise(error: unknown, request: FastifyRequest, reply: FastifyReply): void {
    answerGenerically(error, request, reply);
  }
}
