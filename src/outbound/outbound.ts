// Requests to addresses users give (webhook endpoints, clients' jwks_uri): which targets are allowed, and
// the one HTTP request of an attempt. The pieces live beside this file; importers use this one.
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
export { getDocument, type FetchedDocument } from './get-document.js';
