// A minimal server-side web application that signs users in with Agora (OAuth 2.0 authorization
// code flow with PKCE and OpenID Connect, through openid-client) and calls the GraphQL API.
// Run: AGORA_CLIENT_ID=… AGORA_CLIENT_SECRET=… npm run example:oauth-client   (see README.md)
import * as client from 'openid-client';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';

const ISSUER = process.env.AGORA_URL ?? 'http://localhost:3000';
const PORT = Number(process.env.PORT ?? 4000);
const SELF = process.env.EXAMPLE_URL ?? `http://localhost:${PORT}`;
const REDIRECT_URI = `${SELF}/callback`;
const { AGORA_CLIENT_ID: CLIENT_ID, AGORA_CLIENT_SECRET: CLIENT_SECRET } = process.env;
if (!CLIENT_ID || !CLIENT_SECRET) {
  console.error('Set AGORA_CLIENT_ID and AGORA_CLIENT_SECRET (npm run cli -- apps:create … --redirect-uri ' + REDIRECT_URI + ')');
  process.exit(1);
}

// 1. Discovery: endpoints and keys come from the issuer's metadata.
const config = await client.discovery(new URL(ISSUER), CLIENT_ID, undefined, client.ClientSecretBasic(CLIENT_SECRET), {
  execute: ISSUER.startsWith('http:') ? [client.allowInsecureRequests] : [],
});

/** Server-side sessions: the browser only holds an opaque id. Use a real store in production. */
const sessions = new Map();
function session(req, res) {
  const id = /(?:^|;\s*)example_sid=([\w-]+)/.exec(req.headers.cookie ?? '')?.[1];
  if (id && sessions.has(id)) return sessions.get(id);
  const fresh = randomBytes(24).toString('base64url');
  res.setHeader('set-cookie', `example_sid=${fresh}; HttpOnly; SameSite=Lax; Path=/`);
  sessions.set(fresh, {});
  return sessions.get(fresh);
}

function send(res, status, html) {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><meta charset="utf-8"><title>Example client</title>${html}`);
}
const escape = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

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

createServer(async (req, res) => {
  const url = new URL(req.url, SELF);
  const s = session(req, res);
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
      // 4–5. Back with the code: exchange it (openid-client checks state, iss and the id_token).
      const tokens = await client.authorizationCodeGrant(config, url, { pkceCodeVerifier: s.codeVerifier, expectedState: s.state, expectedNonce: s.nonce });
      delete s.codeVerifier;
      s.accessToken = tokens.access_token;
      s.claims = tokens.claims();
      s.expiresAt = Date.now() + tokens.expires_in * 1000;
      return res.writeHead(302, { location: '/' }).end();
    }
    if (url.pathname === '/logout') {
      sessions.clear();
      return res.writeHead(302, { location: '/' }).end();
    }
    if (url.pathname !== '/') return send(res, 404, '<p>Not found</p>');
    // 6. Call the API; when the hour is up (or access was revoked), sign in again.
    const me = s.accessToken && Date.now() < s.expiresAt ? await viewer(s.accessToken) : null;
    if (!me) {
      delete s.accessToken;
      return send(res, 200, `<h1>Example client</h1><p><a href="/login">Sign in with Agora</a></p>`);
    }
    return send(res, 200, `<h1>Example client</h1><p id="viewer">Signed in as <strong>${escape(me.name)}</strong> (${escape(me.id)})</p><p><a href="/logout">Sign out</a></p>`);
  } catch (err) {
    console.error(err);
    return send(res, 500, `<p>Sign-in failed: ${escape(err.message)}</p><p><a href="/login">Try again</a></p>`);
  }
}).listen(PORT, () => console.log(`Example client on ${SELF} (issuer ${ISSUER})`));
