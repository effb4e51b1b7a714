import type { FastifyHelmetOptions } from '@fastify/helmet';
import type { FastifyReply } from 'fastify';

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
 * @fastify/helmet on every response: the CSP above, no framing, no sniffing, `Referrer-Policy:
 * same-origin` (a page's own form posts then carry their `Origin`, which the CSRF check requires),
 * Cross-Origin-Opener-Policy and Cross-Origin-Resource-Policy same-origin, and HSTS under https.
 */
export function helmetOptions(https: boolean): FastifyHelmetOptions {
  return {
    global: true,
    contentSecurityPolicy: { useDefaults: false, directives: CSP },
    referrerPolicy: { policy: 'same-origin' },
    xFrameOptions: { action: 'deny' },
    crossOriginOpenerPolicy: { policy: 'same-origin' },
    crossOriginResourcePolicy: { policy: 'same-origin' },
    strictTransportSecurity: https ? { maxAge: 31_536_000, includeSubDomains: true } : false,
  };
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

/** Sends an HTML page (helmet has set the security headers); never cached. */
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
