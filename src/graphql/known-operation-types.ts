import { ASTVisitor, GraphQLError, ValidationContext } from 'graphql';

/**
 * An operation of a type the schema does not have (`subscription`: Agora has none) fails validation,
 * as graphql-js 17's KnownOperationTypesRule makes it. graphql-js 16 lets it through to execution,
 * which refuses it with an error Apollo codes INTERNAL_SERVER_ERROR, a server fault for a client's mistake.
 */
export function knownOperationTypes(context: ValidationContext): ASTVisitor {
  const schema = context.getSchema();
  return {
    OperationDefinition(node) {
      if (!schema.getRootType(node.operation)) {
        context.reportError(new GraphQLError(`The schema does not support ${node.operation} operations.`, { nodes: node }));
      }
    },
  };
}
