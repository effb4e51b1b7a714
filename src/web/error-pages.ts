import { html } from './html.js';
import { page } from './layout.js';

const PAGES: Record<number, { title: string; message: string }> = {
  400: { title: 'Bad request', message: 'The browser sent something this page cannot read.' },
  403: {
    title: 'Form expired',
    message: 'This form was not sent from this site, or it has expired. Go back, reload the page and try again.',
  },
  404: {
    title: 'Page not found',
    message: 'There is nothing at this address. Check it for typing mistakes, or start again from your account.',
  },
  405: { title: 'Not available', message: 'This address cannot be used this way.' },
  413: { title: 'Too large', message: 'What you sent is too large.' },
  500: { title: 'Something went wrong', message: 'An unexpected error occurred on our side. Try again in a moment.' },
  503: { title: 'Temporarily unavailable', message: 'Agora cannot answer right now. Try again in a moment.' },
};

/** The HTML page browsers get for an error status (API clients get JSON). */
export function errorPage(status: number, requestId?: string): string {
  const known = PAGES[status] ?? PAGES[status >= 500 ? 500 : 400]!;
  return page({
    title: known.title,
    narrow: true,
    body: html`<div class="card">
      <p class="muted">Error ${status}</p>
      <h1>${known.title}</h1>
      <p>${known.message}</p>
      <div class="actions"><a class="button" href="/">Go to the home page</a></div>
      ${requestId && status >= 500 ? html`<p class="footnote">Request ID: <code>${requestId}</code></p>` : null}
    </div>`,
  });
}

/** Whether the client asked for HTML: a browser navigating, not an API client (which asks for JSON or anything). */
export function wantsHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  const html = accept.indexOf('text/html');
  const json = accept.indexOf('application/json');
  return html !== -1 && (json === -1 || html < json);
}
