import type { FastifyReply } from 'fastify';

/**
 * Headers for every HTML page: a Content-Security-Policy without inline scripts, no framing, no
 * referrer. `formActions` widens form-action for pages whose form ends in a redirect elsewhere
 * (Chromium applies form-action to the redirects that follow a submission).
 */
export function sendPage(reply: FastifyReply, body: string, options: { status?: number; formActions?: string[] } = {}): FastifyReply {
  const formAction = ["'self'", ...(options.formActions ?? [])].join(' ');
  return reply
    .status(options.status ?? 200)
    .header('content-type', 'text/html; charset=utf-8')
    .header(
      'content-security-policy',
      `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
    )
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'no-referrer')
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', 'no-store')
    .send(body);
}
