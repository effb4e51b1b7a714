import type { SignedInUser } from '../web/page-sessions.js';
import { html } from '../web/html.js';
import { page } from '../web/layout.js';
import { vendorUrl } from '../web/vendor-assets.js';

/**
 * GraphiQL, from our own files, running as the signed-in user: assets/explorer.js reads the page's
 * CSRF token from the `csrf-token` meta element and sends it with every call to /graphql, which then
 * accepts the session cookie (see src/dashboard/README.md). The
 * `style-nonce` is this response's CSP nonce for the style elements GraphiQL's dialogs create.
 */
export function explorerPage(o: { signedIn: SignedInUser; csrfToken: string; baseUrl: string; styleNonce: string }): string {
  return page({
    title: 'API explorer',
    user: o.signedIn.user,
    csrfToken: o.csrfToken,
    current: 'explorer',
    full: true,
    head: html`<meta name="csrf-token" content="${o.csrfToken}" />
      <meta name="style-nonce" content="${o.styleNonce}" />
      <link rel="stylesheet" href="${vendorUrl('graphiql.css')}" />`,
    body: html`<div class="explorer-intro">
        <h1>API explorer</h1>
        <p class="lead">
          Queries run against <code>${o.baseUrl}/graphql</code> as you, <strong>@${o.signedIn.user.username}</strong>, with everything your
          account may do (mutations change your real data). To try a <a href="/account#tokens">personal access token</a> instead, put it in
          the Headers tab: <code>{"Authorization": "Bearer agora_pat_…"}</code>.
        </p>
      </div>
      <div id="graphiql" class="graphiql-host" data-endpoint="/graphql">
        <p class="muted">Loading the explorer…</p>
        <noscript><p>The API explorer needs JavaScript.</p></noscript>
      </div>
      <script src="${vendorUrl('react.js')}" defer></script>
      <script src="${vendorUrl('react-dom.js')}" defer></script>
      <script src="${vendorUrl('graphiql.js')}" defer></script>
      <script src="/assets/explorer.js" defer></script>`,
  });
}
