// What bench/layers-server.ts can switch on, shared with bench/layers.ts (which must not start a server by importing it).

/** The layers in the order they are switched on; bench/layers.ts prints one row per prefix. */
export const LAYERS = [
  'Fastify, a route answering a constant (no logger)',
  "Agora's Fastify options: pino logger (LOG_LEVEL) with a child per request, request ids, proxy trust",
  'security headers and X-Request-Id (one onRequest hook)',
  'cookie plugin (@fastify/cookie)',
  'CORS (the OAuth endpoints’ onRequest hook)',
  'drain (request listener and onSend hook)',
  'RequestLoad (in-flight count)',
  'legacy API hooks (onRequest, onSend, onResponse)',
  'HTTP metrics (onResponse: counter and histogram)',
  'Apollo Server as GraphqlController calls it (request, context, document limits, compiled execution)',
  'credential check: Private-Token from the credential cache (RequestAuthenticator)',
  'operation policy plugin and error logging plugin',
  'rate limit: the budget charged, X-RateLimit-* headers',
  'GraphQL metrics plugin',
] as const;

/** The Private-Token the layered servers accept (their credential cache holds it). */
export const LAYERS_TOKEN = 'agora_pat_benchlayersbenchlayersbenchlayersbenchlayer';
