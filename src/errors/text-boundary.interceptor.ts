import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { Observable } from 'rxjs';
import { assertStorableText } from './text-input.js';

/**
 * The one boundary for text on HTTP routes: every string of the query string, the path parameters and
 * the body (form fields, JSON, GraphQL variables) is checked before a handler runs; the transport's
 * filter answers UnstorableTextError in its own shape. GraphQL string literals inside a document are
 * checked by the `storableStringLiterals` validation rule.
 */
@Injectable()
export class TextBoundaryInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() === 'http') {
      const req = context.switchToHttp().getRequest<FastifyRequest>();
      assertStorableText(req.params, '');
      assertStorableText(req.query, '');
      assertStorableText(req.body, '');
    }
    return next.handle();
  }
}
