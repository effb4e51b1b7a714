// A command-line tool that signs its user in to Agora with the device authorization grant (RFC 8628),
// through openid-client: it shows a code, the user approves it in a browser on any device, and the
// tool gets an access token and calls the GraphQL API. No browser, redirect or listener is needed here.
// Run: AGORA_CLIENT_ID=… npm run example:device-client   (see README.md)
import * as client from 'openid-client';

const ISSUER = process.env.AGORA_URL ?? 'http://localhost:3000';
const SCOPE = process.env.AGORA_SCOPE ?? 'openid profile api';
const { AGORA_CLIENT_ID: CLIENT_ID, AGORA_CLIENT_SECRET: CLIENT_SECRET } = process.env;
if (!CLIENT_ID) {
  console.error('Set AGORA_CLIENT_ID to the Application ID of a public application (see README.md)');
  process.exit(1);
}

// 1. Discovery. A command-line tool cannot keep a secret: it is a public client (token_endpoint_auth_method
//    none) and identifies itself by its client id alone. AGORA_CLIENT_SECRET is for a confidential one.
const config = await client.discovery(
  new URL(ISSUER),
  CLIENT_ID,
  undefined,
  CLIENT_SECRET ? client.ClientSecretPost(CLIENT_SECRET) : client.None(),
  { execute: ISSUER.startsWith('http:') ? [client.allowInsecureRequests] : [] },
);

// 2. Ask for a device code and a user code, and show the user where to enter it.
const started = await client.initiateDeviceAuthorization(config, { scope: SCOPE });
console.log(`To sign in, open ${started.verification_uri} in a browser and enter the code ${started.user_code}`);
console.log(`Or open ${started.verification_uri_complete}`);
console.log(`The code expires in ${Math.round(started.expires_in / 60)} minutes. Waiting for your approval…`);

// 3. Poll the token endpoint: openid-client waits `interval` seconds between polls, slows down when
//    told to (slow_down), and returns once the user approved; a denial or expiry ends in an error.
let tokens;
try {
  tokens = await client.pollDeviceAuthorizationGrant(config, started);
} catch (err) {
  if (err instanceof client.ResponseBodyError && err.error === 'access_denied') {
    console.error('You denied the request: nothing was shared.');
    process.exit(2);
  }
  if (err instanceof client.ResponseBodyError && err.error === 'expired_token') {
    console.error('The code expired before it was approved: run the tool again.');
    process.exit(3);
  }
  throw err;
}

// 4. The id_token was validated by openid-client (signature, issuer, audience, expiry).
const claims = tokens.claims();
if (claims) console.log(`Signed in: id_token for ${claims.preferred_username ?? claims.sub}`);

// 5. Call the API with the access token (valid for tokens.expires_in seconds: 3600).
const res = await fetch(`${ISSUER}/graphql`, {
  method: 'POST',
  headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens.access_token}` },
  body: JSON.stringify({ query: '{ viewer { id name } }' }),
});
if (!res.ok) throw new Error(`GraphQL answered ${res.status}`);
const { viewer } = (await res.json()).data;
console.log(`Signed in as ${viewer.name} (${viewer.id})`);
