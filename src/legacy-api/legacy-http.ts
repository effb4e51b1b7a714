import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';

/** Request parsing and response headers shared by the legacy REST controllers. */

/** A body or query string that does not have the documented shape: 400 with the problems by field. */
export class RequestValidationError extends Error {
  constructor(readonly errors: Record<string, string[]>) {
    super('400 Bad Request');
  }
}

export function parse<T extends z.ZodType>(schema: T, value: unknown): z.output<T> {
  const result = schema.safeParse(value ?? {});
  if (result.success) return result.data;
  const errors: Record<string, string[]> = {};
  for (const issue of result.error.issues) {
    const field = issue.path.length ? issue.path.join('.') : 'body';
    (errors[field] ??= []).push(issue.message);
  }
  throw new RequestValidationError(errors);
}

export const pagingQuery = z.object({
  page: z.coerce.number({ error: 'must be a number' }).int('must be a whole number').min(1, 'must be at least 1').default(1),
  per_page: z.coerce
    .number({ error: 'must be a number' })
    .int('must be a whole number')
    .min(1, 'must be between 1 and 100')
    .max(100, 'must be between 1 and 100')
    .default(20),
});

/**
 * GitLab-style pagination headers: `X-Total`, `X-Total-Pages`, `X-Page`, `X-Per-Page`, `X-Next-Page`,
 * `X-Prev-Page`, and `Link` with first/prev/next/last, added to the deprecation links already there.
 */
export function setPagingHeaders(
  request: FastifyRequest,
  reply: FastifyReply,
  baseUrl: string,
  page: { total: number; page: number; perPage: number },
): void {
  const totalPages = Math.max(1, Math.ceil(page.total / page.perPage));
  const url = new URL(request.url, baseUrl);
  const link = (n: number, rel: string) => {
    url.searchParams.set('page', String(n));
    url.searchParams.set('per_page', String(page.perPage));
    return `<${url.toString()}>; rel="${rel}"`;
  };
  const links = [link(1, 'first')];
  if (page.page > 1) links.push(link(Math.min(page.page - 1, totalPages), 'prev'));
  if (page.page < totalPages) links.push(link(page.page + 1, 'next'));
  links.push(link(totalPages, 'last'));
  appendLinks(reply, links);
  void reply
    .header('x-total', String(page.total))
    .header('x-total-pages', String(totalPages))
    .header('x-page', String(page.page))
    .header('x-per-page', String(page.perPage))
    .header('x-next-page', page.page < totalPages ? String(page.page + 1) : '')
    .header('x-prev-page', page.page > 1 ? String(Math.min(page.page - 1, totalPages)) : '');
}

export function appendLinks(reply: FastifyReply, links: string[]): void {
  const existing = reply.getHeader('link');
  const current = existing === undefined ? [] : Array.isArray(existing) ? existing.map(String) : [String(existing)];
  void reply.header('link', [...current, ...links].join(', '));
}
