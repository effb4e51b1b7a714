// A minimal server-side web application that signs users in with Agora (OAuth 2.0 authorization
// code flow with PKCE and OpenID Connect, through openid-client), calls the GraphQL API, and signs
// them out through Agora's logout endpoint.
// Run: AGORA_CLIENT_ID=… AGORA_CLIENT_SECRET=… npm run example:oauth-client   (see README.md)
import * as client from 'openid-client';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';

const ISSUER = process.env.AGORA_URL ?? 'http://localhost:3000';
const PORT = Number(process.env.PORT ?? 4000);
const SELF = process.env.EXAMPLE_URL ?? `http://localhost:${PORT}`;
const REDIRECT_URI = `${SELF}/callback`;
const POST_LOGOUT_REDIRECT_URI = `${SELF}/signed-out`;
const { AGORA_CLIENT_ID: CLIENT_ID, AGORA_CLIENT_SECRET: CLIENT_SECRET } = process.env;
if (!CLIENT_ID || !CLIENT_SECRET) {
  console.error(
    `Set AGORA_CLIENT_ID and AGORA_CLIENT_SECRET (npm run cli -- apps:create … --redirect-uri ${REDIRECT_URI} --post-logout-redirect-uri ${POST_LOGOUT_REDIRECT_URI})`,
  );
  process.exit(1);
}

// 1. Discovery: endpoints and keys come from the issuer's metadata.
const config = await client.discovery(new URL(ISSUER), CLIENT_ID, undefined, client.ClientSecretBasic(CLIENT_SECRET), {
  execute: ISSUER.startsWith('http:') ? [client.allowInsecureRequests] : [],
});

/**
 * Server-side sessions, one per browser: the browser holds only an opaque id in its own cookie, and
 * everything else (PKCE verifier, tokens) stays here. Use a real store in production.
 */
const sessions = new Map();
const COOKIE = 'example_sid';
function session(req, res) {
  const id = new RegExp(`(?:^|;\\s*)${COOKIE}=([\\w-]+)`).exec(req.headers.cookie ?? '')?.[1];
  if (id && sessions.has(id)) return { id, s: sessions.get(id) };
  const fresh = randomBytes(24).toString('base64url');
  res.setHeader('set-cookie', `${COOKIE}=${fresh}; HttpOnly; SameSite=Lax; Path=/`);
  sessions.set(fresh, {});
  return { id: fresh, s: sessions.get(fresh) };
}

const escape = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
function send(res, status, html) {
  res
    .writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
    .end(`<!doctype html><meta charset="utf-8"><title>Example client</title><h1>Example client</h1>${html}`);
}
const TRY_AGAIN = '<p><a href="/login">Sign in with Agora</a></p>';

/**
 * What each error the authorization endpoint may send back means for the user (docs/oauth.md,
 * "Errors"): the user's own choice, something they can fix, or a fault of this application.
 */
const AUTHORIZATION_ERRORS = {
  access_denied: [200, 'You chose not to sign in with Agora. Nothing was shared with this application.'],
  login_required: [200, 'You are not signed in to Agora. Sign in to continue.'],
  consent_required: [200, 'You have not approved this application yet. Sign in and approve it to continue.'],
  interaction_required: [200, 'Agora needs you to confirm your sign-in. Sign in to continue.'],
  unmet_authentication_requirements: [
    403,
    'This application needs a sign-in with a second factor, and your Agora account has none. Set one up under Account → Security in Agora, then sign in again.',
  ],
  invalid_request: [400, 'This application sent Agora a request it could not accept. The application is misconfigured.'],
  invalid_scope: [400, 'This application asked Agora for access it may not have. The application is misconfigured.'],
  unsupported_response_type: [400, 'This application asked Agora for a kind of answer it does not give. The application is misconfigured.'],
};
function authorizationErrorPage(res, error, description) {
  const [status, text] = Object.hasOwn(AUTHORIZATION_ERRORS, error) ? AUTHORIZATION_ERRORS[error] : [400, 'Agora could not sign you in to this application.'];
  const detail = description ? ` (${escape(description)})` : '';
  return send(res, status, `<p id="error" data-error="${escape(error)}">${text}</p><p class="detail"><code>${escape(error)}</code>${detail}</p>${TRY_AGAIN}`);
}

async function viewer(accessToken) {
  const res = await fetch(`${ISSUER}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${accessToken}` },
    body: JSON.stringify({ query: '{ viewer { id name } }' }),
  });
  if (res.status === 401) return null; // expired or revoked: run the flow again
  if (!res.ok) throw new Error(`GraphQL answered ${res.status}`);
  return (await res.json()).data.viewer;
}

const server = createServer(async (req, res) => {
  const url = new URL(req.url, SELF);
  const { id, s } = session(req, res);
  try {
    if (url.pathname === '/login') {
      // 2. A fresh PKCE verifier (kept server-side), state and nonce for each sign-in.
      s.codeVerifier = client.randomPKCECodeVerifier();
      s.state = client.randomState();
      s.nonce = client.randomNonce();
      // 3. Send the browser to the authorization endpoint.
      const target = client.buildAuthorizationUrl(config, {
        redirect_uri: REDIRECT_URI,
        scope: 'openid profile api',
        code_challenge: await client.calculatePKCECodeChallenge(s.codeVerifier),
        code_challenge_method: 'S256',
        state: s.state,
        nonce: s.nonce,
      });
      return res.writeHead(302, { location: target.href }).end();
    }
    if (url.pathname === '/callback') {
      // A callback this browser did not start (no verifier: another browser's link, a reload, a
      // used one) is refused before anything is sent to Agora.
      if (!s.codeVerifier || url.searchParams.get('state') !== s.state) {
        return send(res, 400, `<p id="error" data-error="state">This sign-in was not started in this browser, or was already finished.</p>${TRY_AGAIN}`);
      }
      const { codeVerifier, state, nonce } = s;
      delete s.codeVerifier;
      delete s.state;
      delete s.nonce;
      // An error answer (the user chose Deny, …): the user is told what happened, never a 500.
      if (url.searchParams.has('error')) return authorizationErrorPage(res, url.searchParams.get('error'), url.searchParams.get('error_description'));
      // 4–5. Back with the code: exchange it (openid-client checks state, iss and the id_token).
      const tokens = await client.authorizationCodeGrant(config, url, { pkceCodeVerifier: codeVerifier, expectedState: state, expectedNonce: nonce });
      s.accessToken = tokens.access_token;
      s.idToken = tokens.id_token; // kept for signing out (id_token_hint)
      s.expiresAt = Date.now() + tokens.expires_in * 1000;
      return res.writeHead(302, { location: '/' }).end();
    }
    if (url.pathname === '/logout') {
      // 7. Sign this browser's user out, here and at Agora: only this session is forgotten.
      const idToken = s.idToken;
      sessions.delete(id);
      if (!idToken) return res.writeHead(302, { location: '/' }).end();
      const state = client.randomState();
      const next = session({ headers: {} }, res); // a fresh session that remembers the logout's state
      next.s.logoutState = state;
      const target = client.buildEndSessionUrl(config, { id_token_hint: idToken, post_logout_redirect_uri: POST_LOGOUT_REDIRECT_URI, state });
      return res.writeHead(302, { location: target.href }).end();
    }
    if (url.pathname === '/signed-out') {
      const ours = s.logoutState !== undefined && url.searchParams.get('state') === s.logoutState;
      delete s.logoutState;
      return send(res, 200, `<p id="signed-out">${ours ? 'You are signed out of this application and of Agora.' : 'You are signed out.'}</p>${TRY_AGAIN}`);
    }
    if (url.pathname !== '/') return send(res, 404, '<p>Not found</p>');
    // 6. Call the API; when the hour is up (or access was revoked), sign in again.
    const me = s.accessToken && Date.now() < s.expiresAt ? await viewer(s.accessToken) : null;
    if (!me) {
      delete s.accessToken;
      return send(res, 200, TRY_AGAIN);
    }
    return send(
      res,
      200,
      `<p id="viewer">Signed in as <strong>${escape(me.name)}</strong> (${escape(me.id)})</p><p><a href="/logout">Sign out</a></p>`,
    );
  } catch (err) {
    // The token endpoint's refusal (a code used twice, expired, …) or a response openid-client rejects.
    if (err instanceof client.ResponseBodyError || err instanceof client.AuthorizationResponseError) {
      return authorizationErrorPage(res, err.error, err.error_description);
    }
    console.error(err);
    return send(res, 500, `<p id="error" data-error="internal">Sign-in failed on this application's side.</p>${TRY_AGAIN}`);
  }
});
server.listen(PORT, () => console.log(`Example client on ${SELF} (issuer ${ISSUER})`));

// `npm run example:oauth-client` runs this process in npm's place (exec), so npm's SIGTERM and a
// terminal's Ctrl-C reach it: stop listening, end idle keep-alive connections, and exit.
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, () => {
    console.log(`${signal}: stopping`);
    server.close(() => process.exit(0));
    server.closeIdleConnections();
    setTimeout(() => process.exit(0), 2000).unref();
  });
}
