import { GraphQLError, ValidationContext, ASTVisitor } from 'graphql';
import { UnstorableTextError, unstorableText } from '../errors/text-input.js';

/**
 * The text boundary inside GraphQL documents: a string literal (`event(slug: "a\u0000b")`) that
 * cannot be stored is refused at validation, as BAD_USER_INPUT, before any resolver sees it.
 * Variables are checked with the rest of the request body (TextBoundaryGuard).
 */
export function storableStringLiterals(context: ValidationContext): ASTVisitor {
  return {
    StringValue(node) {
      const reason = unstorableText(node.value);
      if (reason) {
        const error = new UnstorableTextError('query', reason);
        context.reportError(new GraphQLError(`String value ${reason}`, { nodes: [node], originalError: error }));
      }
    },
  };
}
