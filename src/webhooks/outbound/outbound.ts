// The outbound side of webhooks: which targets are allowed, the one HTTP request of an attempt, and
// its Standard Webhooks signature. The pieces live beside this file; importers use this one.
export { addressProblem, metadataProblem } from './target-address.js';
export { MAX_URL_LENGTH, urlProblem, urlShapeProblem, type TargetPolicy } from './target-url.js';
export {
  defaultResolver,
  dnsResolver,
  resolvesName,
  systemResolver,
  targetProblem,
  type OutboundOptions,
  type ResolveHost,
} from './target-resolution.js';
export { EXCERPT_CHARS, MAX_RESPONSE_BYTES, postWebhook, type WebhookRequest, type WebhookResponse } from './post-webhook.js';
export { signedHeaders } from './signed-headers.js';
