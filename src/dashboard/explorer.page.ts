import type { SignedInUser } from '../sessions/sessions.service.js';
import { html } from '../web/html.js';
import { page } from '../web/layout.js';

const EXAMPLE = `query {
  viewer {
    id
    name
  }
}`;

export function explorerPage(o: { signedIn: SignedInUser; csrfToken: string; baseUrl: string }): string {
  return page({
    title: 'API explorer',
    user: o.signedIn.user,
    csrfToken: o.csrfToken,
    current: 'explorer',
    body: html` <h1>API explorer</h1>
      <p class="lead">
        Run GraphQL queries against <code>${o.baseUrl}/graphql</code> with one of your
        <a href="/account#tokens">personal access tokens</a> (sent as <code>Private-Token</code>; not stored). Without a token you see what
        anonymous callers see.
      </p>
      <div class="explorer">
        <form id="explorer" class="card">
          <label for="token">Personal access token</label>
          <input id="token" type="password" autocomplete="off" placeholder="agora_pat_…" />
          <label for="query">Query</label>
          <textarea id="query" class="code" rows="12" spellcheck="false">${EXAMPLE}</textarea>
          <label for="variables">Variables (JSON, optional)</label>
          <textarea id="variables" class="code" rows="3" spellcheck="false"></textarea>
          <div class="actions">
            <button type="submit">Run query</button><span id="status" class="muted" role="status" aria-live="polite"></span>
          </div>
        </form>
        <div>
          <h2>Result</h2>
          <pre id="result" class="result" aria-live="polite"></pre>
        </div>
      </div>
      <script src="/assets/explorer.js" defer></script>`,
  });
}
