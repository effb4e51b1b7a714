/* global React, ReactDOM, GraphiQL -- loaded before this file from /assets/vendor */
// The API explorer: GraphiQL (loaded before this file from /assets/vendor), running as the signed-in
// user. Every call to /graphql carries the page's CSRF token, which is what lets the API accept the
// session cookie; a token typed into GraphiQL's Headers tab takes precedence over the session.
(function () {
  const host = document.getElementById('graphiql');
  const csrfToken = document.querySelector('meta[name="csrf-token"]').getAttribute('content');
  const endpoint = host.dataset.endpoint;
  // GraphiQL's dialogs add a <style> element, with this nonce if set (the page's CSP allows only that).
  window.__webpack_nonce__ = document.querySelector('meta[name="style-nonce"]').getAttribute('content');

  async function fetcher(params, options) {
    const headers = new Headers(options && options.headers);
    headers.set('content-type', 'application/json');
    headers.set('accept', 'application/json');
    headers.set('x-csrf-token', csrfToken);
    const res = await fetch(endpoint, { method: 'POST', headers, body: JSON.stringify(params), credentials: 'same-origin' });
    const text = await res.text();
    try {
      return JSON.parse(text);
    } catch {
      return { errors: [{ message: `HTTP ${res.status}: ${text.slice(0, 200)}` }] };
    }
  }

  const defaultQuery = '{\n  viewer {\n    id\n    name\n  }\n}\n';
  host.replaceChildren();
  ReactDOM.createRoot(host).render(
    React.createElement(GraphiQL, { fetcher, defaultQuery, defaultEditorToolsVisibility: false, shouldPersistHeaders: false }),
  );
})();
