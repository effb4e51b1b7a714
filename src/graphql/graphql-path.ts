/** Where the GraphQL API is served (GraphqlController, Apollo's own configuration, error responses). */
export const GRAPHQL_PATH = '/graphql';
