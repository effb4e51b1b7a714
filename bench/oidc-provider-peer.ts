// The token endpoint's peer: node-oidc-provider 9 with its in-memory adapter, in a process of its own.
// `node oidc-provider-peer.js <port> <codes file> <count>` writes <count> authorization codes for `openid profile`
// (a confidential client, client_secret_post, PKCE S256 with the verifier `BENCH_VERIFIER`) to <codes file>
// as JSON, then serves; the benchmark exchanges them at /token exactly as it exchanges Agora's.
import { createHash, generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import Provider from 'oidc-provider';
import MemoryAdapter from 'oidc-provider/lib/adapters/memory_adapter.js';

const [port, codesFile, count] = [Number(process.argv[2]), process.argv[3]!, Number(process.argv[4])];
const clientId = 'bench';
const clientSecret = process.env.BENCH_CLIENT_SECRET!;
const verifier = process.env.BENCH_VERIFIER!;
const redirectUri = 'http://localhost:4000/cb';

// The in-memory adapter as shipped keeps at most 1,000 entries (an LRU): the benchmark needs tens of thousands
// of codes, so the same adapter gets a Map for its storage (no expiry, which no code or token reaches during a run).
const storage = new Map<string, unknown>();

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const provider = new Provider(`http://127.0.0.1:${port}`, {
  clients: [
    {
      client_id: clientId,
      client_secret: clientSecret,
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_post',
    },
  ],
  jwks: { keys: [{ ...privateKey.export({ format: 'jwk' }), kid: 'k', use: 'sig', alg: 'RS256' }] },
  // The id_token carries what Agora's does for these scopes: the profile claims and how the user signed in.
  claims: { openid: ['sub'], profile: ['name', 'preferred_username'], acr: null, amr: null, auth_time: null },
  conformIdTokenClaims: false,
  features: { devInteractions: { enabled: false } },
  findAccount: (_ctx: unknown, sub: string) => ({
    accountId: sub,
    claims: () => ({ sub, name: 'Bench User', preferred_username: 'bench' }),
  }),
  adapter: class extends MemoryAdapter {
    constructor(model: string) {
      super(model, storage);
    }
  },
  ttl: { AuthorizationCode: 3600, AccessToken: 3600, IdToken: 3600, Grant: 3600 },
});

const client = (await provider.Client.find(clientId))!;
const challenge = createHash('sha256').update(verifier).digest('base64url');
const authTime = Math.floor(Date.now() / 1000);
const codes: string[] = [];
for (let i = 0; i < count; i++) {
  // One grant per code, as one consent per authorization would leave them (the adapter scans a grant's
  // members on every write, which one grant shared by every code would make quadratic).
  const grant = new provider.Grant({ accountId: 'bench-user', clientId });
  grant.addOIDCScope('openid profile');
  const grantId = await grant.save();
  codes.push(
    await new provider.AuthorizationCode({
      accountId: 'bench-user',
      client,
      grantId,
      redirectUri,
      scope: 'openid profile',
      codeChallenge: challenge,
      codeChallengeMethod: 'S256',
      nonce: 'n',
      authTime,
      amr: ['pwd'],
      acr: 'urn:agora:password',
    }).save(),
  );
}
writeFileSync(codesFile, JSON.stringify(codes));
provider.listen(port, '127.0.0.1');
