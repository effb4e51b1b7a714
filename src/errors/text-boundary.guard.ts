import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { assertStorableText } from './text-input.js';

/**
 * The one boundary for text on HTTP routes: every string of the query string, the path parameters and
 * the body (form fields, JSON, GraphQL variables) is checked before a handler runs; the transport's
 * filter answers UnstorableTextError in its own shape. GraphQL string literals inside a document are
 * checked by the `storableStringLiterals` validation rule.
 *
 * A guard that never denies, added by `configureApp` after the modules' global guards, so it runs last:
 * an anonymous call to a protected route is still a 401, a form without its CSRF token still a 403,
 * and the controller's own exception filter answers, as when this was an interceptor (whose RxJS
 * plumbing cost more than the check on every request and every GraphQL root field).
 */
@Injectable()
export class TextBoundaryGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    if (context.getType() === 'http') {
      const req = context.switchToHttp().getRequest<FastifyRequest>();
      assertStorableText(req.params, '');
      assertStorableText(req.query, '');
      assertStorableText(req.body, '');
    }
    return true;
  }
}
