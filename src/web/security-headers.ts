import type { FastifyReply } from 'fastify';
import helmet, { HelmetOptions } from 'helmet';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** The pages' Content-Security-Policy: no inline scripts or styles, nothing from other sites, no framing. */
const CSP = {
  defaultSrc: ["'none'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'", 'data:'],
  fontSrc: ["'self'"],
  connectSrc: ["'self'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
  baseUri: ["'none'"],
};

/**
 * Helmet's policy for every response: the CSP above, no framing, no sniffing, `Referrer-Policy:
 * same-origin` (a page's own form posts then carry their `Origin`, which the CSRF check requires),
 * Cross-Origin-Opener-Policy and Cross-Origin-Resource-Policy same-origin, and HSTS under https.
 */
export function helmetOptions(https: boolean): HelmetOptions {
  return {
    contentSecurityPolicy: { useDefaults: false, directives: CSP },
    referrerPolicy: { policy: 'same-origin' },
    xFrameOptions: { action: 'deny' },
    crossOriginOpenerPolicy: { policy: 'same-origin' },
    crossOriginResourcePolicy: { policy: 'same-origin' },
    strictTransportSecurity: https ? { maxAge: 31_536_000, includeSubDomains: true } : false,
  };
}

/**
 * The headers helmet sets for `helmetOptions(https)`, computed by helmet once at start-up: none of them
 * depends on the request (no CSP directive is a function), and @fastify/helmet would rebuild the whole
 * policy, CSP string included, for every request. Every response carries them (`app.factory.ts`).
 */
export function securityHeaders(https: boolean): Record<string, string> {
  const headers: Record<string, string> = {};
  const response = {
    setHeader(name: string, value: string | number) {
      headers[name.toLowerCase()] = String(value);
      return response;
    },
    // Helmet removes X-Powered-By, which Fastify never sets.
    removeHeader(name: string) {
      delete headers[name.toLowerCase()];
    },
  };
  helmet(helmetOptions(https))({} as IncomingMessage, response as unknown as ServerResponse, (err?: unknown) => {
    if (err) throw err;
  });
  return headers;
}

/** Sources a page adds to the CSP's directives, for that page's response only. */
export type CspAdditions = Partial<Record<keyof typeof CSP, string[]>>;

/** The CSP with more sources allowed: the consent page's redirect to the client, the explorer's fonts. */
function cspWith(additions: CspAdditions): string {
  const directives: Record<string, string[]> = { ...CSP };
  for (const [name, values] of Object.entries(additions)) directives[name] = [...directives[name]!, ...values];
  return Object.entries(directives)
    .map(([name, values]) => `${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} ${values.join(' ')}`)
    .join('; ');
}

/** Sends an HTML page (the security headers are already set); never cached. */
export function sendHtml(
  reply: FastifyReply,
  body: string,
  options: { status?: number; formActions?: string[]; csp?: CspAdditions } = {},
): FastifyReply {
  const additions: CspAdditions = { ...options.csp };
  if (options.formActions?.length) additions.formAction = [...(additions.formAction ?? []), ...options.formActions];
  if (Object.keys(additions).length) void reply.header('content-security-policy', cspWith(additions));
  return reply
    .status(options.status ?? 200)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .send(body);
}
