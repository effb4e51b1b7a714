import { html, SafeHtml } from './html.js';

export interface PageOptions {
  title: string;
  body: SafeHtml;
  /** The signed-in user, for the header. */
  user?: { username: string; name: string } | null;
  csrfToken?: string;
  /** Narrow centred card (sign-in, consent) rather than the wide dashboard layout. */
  narrow?: boolean;
  /** The whole width of the window (the API explorer), rather than the wide dashboard layout. */
  full?: boolean;
  /** More elements for the head: a page's own stylesheets and metadata. */
  head?: SafeHtml;
  /** A one-time confirmation of what the previous form did ("Token revoked"). */
  notice?: string;
  /** Which main navigation entry is this page. */
  current?: 'account' | 'security' | 'applications' | 'resource-servers' | 'webhooks' | 'service-accounts' | 'authorized' | 'explorer';
}

export function page({ title, body, user, csrfToken, narrow, full, head, current, notice }: PageOptions): string {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title} · Agora</title>
        <link rel="stylesheet" href="/assets/app.css" />
        <link rel="icon" href="/assets/favicon.svg" type="image/svg+xml" />
        <script src="/assets/app.js" defer></script>
        ${head ?? null}
      </head>
      <body>
        <header class="topbar">
          <a class="brand" href="/">Agora</a>
          ${
            user
              ? html`<details class="menu">
                  <summary>Menu</summary>
                  <div class="menu-items">
                    <nav class="main" aria-label="Main">
                      <a href="/account" ${current === 'account' ? html`aria-current="page"` : ''}>Account &amp; tokens</a>
                      <a href="/account/security" ${current === 'security' ? html`aria-current="page"` : ''}>Security</a>
                      <a href="/applications" ${current === 'applications' ? html`aria-current="page"` : ''}>Applications</a>
                      <a href="/resource-servers" ${current === 'resource-servers' ? html`aria-current="page"` : ''}>Resource servers</a>
                      <a href="/webhooks" ${current === 'webhooks' ? html`aria-current="page"` : ''}>Webhooks</a>
                      <a href="/service-accounts" ${current === 'service-accounts' ? html`aria-current="page"` : ''}>Service accounts</a>
                      <a href="/account/authorized" ${current === 'authorized' ? html`aria-current="page"` : ''}>Authorized apps</a>
                      <a href="/explorer" ${current === 'explorer' ? html`aria-current="page"` : ''}>API explorer</a>
                    </nav>
                    <div class="account">
                      <span class="who" title="${user.name} @${user.username}"
                        >${user.name} <span class="muted">@${user.username}</span></span
                      >
                      <form method="post" action="/sign-out">
                        <input type="hidden" name="_csrf" value="${csrfToken ?? ''}" />
                        <button class="link" type="submit">Sign out</button>
                      </form>
                    </div>
                  </div>
                </details>`
              : null
          }
        </header>
        <main class="${narrow ? 'narrow' : full ? 'full' : 'wide'}">
          ${notice ? html`<div class="alert ok" role="status">${notice}</div>` : null}${body}
        </main>
      </body>
    </html>`.value;
}

/** A field's error message, shown next to it. */
export function fieldError(message: string | undefined, id: string): SafeHtml {
  return message ? html`<p class="field-error" id="${id}-error" role="alert">${message}</p>` : html``;
}

/** A destructive action's own page: what will happen, Cancel, and the one form that does it. */
export function confirmationPage(o: {
  title: string;
  heading: string;
  /** What happens, in a paragraph. */
  consequences: SafeHtml | string;
  /** Where the form posts. */
  action: string;
  button: string;
  cancelHref: string;
  user: { username: string; name: string };
  csrfToken: string;
  current?: PageOptions['current'];
}): string {
  return page({
    title: o.title,
    narrow: true,
    user: o.user,
    csrfToken: o.csrfToken,
    current: o.current,
    body: html`<div class="card">
      <h1>${o.heading}</h1>
      <p>${o.consequences}</p>
      <form method="post" action="${o.action}">
        <input type="hidden" name="_csrf" value="${o.csrfToken}" />
        <div class="actions stretch">
          <a class="button secondary" href="${o.cancelHref}">Cancel</a>
          <button type="submit" class="danger">${o.button}</button>
        </div>
      </form>
    </div>`,
  });
}
