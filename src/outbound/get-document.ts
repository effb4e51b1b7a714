import { describeError, exchange, untilAborted } from './post-webhook.js';
import { DEFAULT_TIMEOUT_MS, defaultResolver, resolveTarget, seconds, type OutboundOptions } from './target-resolution.js';
import { urlHost, urlProblem, type TargetPolicy } from './target-url.js';

/** A document fetched, or why not (in words for the person who gave the URL). */
export type FetchedDocument = { body: Buffer } | { problem: string };

/**
 * GETs a small document from an address a user gave (a client's `jwks_uri`), with every rule of a
 * webhook delivery (postWebhook): the URL and each address the name resolves to checked against the
 * policy, the connection pinned to the checked addresses, no redirects, one deadline for the whole
 * exchange. Only a 200 whose body is smaller than `maxBytes` is a document; anything larger is refused,
 * not cut. Never throws for anything the target does.
 */
export async function getDocument(
  url: string,
  policy: TargetPolicy,
  maxBytes: number,
  options: OutboundOptions & { accept?: string } = {},
): Promise<FetchedDocument> {
  const problem = urlProblem(url, policy);
  if (problem) return { problem: `refused: ${problem}` };
  const parsed = new URL(url);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), timeoutMs);
  const timedOut = { problem: `timed out after ${seconds(timeoutMs)}` };
  try {
    const target = await untilAborted(
      resolveTarget(urlHost(parsed), policy, options.resolve ?? defaultResolver(policy), deadline.signal),
      deadline.signal,
    );
    if (!target) return timedOut;
    if ('problem' in target) return { problem: `refused: ${target.problem}` };
    const headers = { 'user-agent': 'Agora/1', accept: options.accept ?? 'application/json' };
    const answer = await exchange(parsed, { method: 'GET', headers, maxBytes }, target.addresses, deadline.signal);
    if (answer.status !== 200)
      return { problem: `answered ${answer.status}${answer.location ? ` (redirect to ${answer.location} not followed)` : ''}` };
    if (answer.truncated) return { problem: `the document is larger than ${maxBytes} bytes` };
    return { body: answer.body };
  } catch (error) {
    return deadline.signal.aborted ? timedOut : { problem: describeError(error) };
  } finally {
    clearTimeout(timer);
  }
}
