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

/** The CSP with more origins allowed in form-action (the consent page's redirect to the client). */
function cspWith(formActions: string[]): string {
  const directives: Record<string, string[]> = { ...CSP, formAction: [...CSP.formAction, ...formActions] };
  return Object.entries(directives)
    .map(([name, values]) => `${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} ${values.join(' ')}`)
    .join('; ');
}

/** Sends an HTML page (helmet has set the security headers); never cached. */
export function sendHtml(reply: FastifyReply, body: string, options: { status?: number; formActions?: string[] } = {}): FastifyReply {
  if (options.formActions?.length) void reply.header('content-security-policy', cspWith(options.formActions));
  return reply.status(options.status ?? 200).header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-store').send(body);
}
