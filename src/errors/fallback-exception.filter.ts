import { ArgumentsHost, Catch, ExceptionFilter, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ErrorMappers } from './error-mappers.js';
import { answerGenerically } from './generic-errors.js';

/**
 * The global filter, last resort for every HTTP error no controller filter answered: first what a
 * feature registered (ErrorMappers), then the generic mapping. Errors of GraphQL resolvers are Apollo's
 * to format (formatGraphqlError): rethrown.
 */
@Catch()
@Injectable()
export class FallbackExceptionFilter implements ExceptionFilter {
  constructor(private readonly mappers: ErrorMappers) {}

  catch(error: unknown, host: ArgumentsHost): void {
    if (host.getType() !== 'http') throw error;
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    if (reply.sent) return;
    if (!this.mappers.answer(error, request, reply)) answerGenerically(error, request, reply);
  }
}
