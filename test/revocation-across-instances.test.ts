import { ApplicationsService } from '../src/oauth/clients/applications.service.js';
import { PersonalTokensService } from '../src/personal-tokens/personal-tokens.service.js';
import { UsersService } from '../src/users/users.service.js';
import { serverUrl } from './support/database.js';
import { createUser, createUserWithToken } from './support/fixtures.js';
import { graphql } from './support/http.js';
import { registerApp, unknownCodeError } from './support/oauth.js';
import { proxyDatabase, TcpProxy } from './support/tcp-proxy.js';
import { startTestApp, TestApp } from './support/test-app.js';

// Two instances share one PostgreSQL server; instance B reaches it through a proxy that can slow down
// or stop what the server sends it (its change notifications among them).
const onServer = serverUrl() ? describe : describe.skip;

onServer('revocation across instances', () => {
  let a: TestApp;
  let b: TestApp;
  let proxy: TcpProxy;

  beforeAll(async () => {
    a = await startTestApp();
    let viaProxy: string;
    ({ proxy, url: viaProxy } = await proxyDatabase(a.databaseEnv.DATABASE_URL!));
    b = await startTestApp({}, { databaseEnv: { ...a.databaseEnv, DATABASE_URL: viaProxy } });
  });

  afterEach(() => {
    proxy.delayMs = 0;
    proxy.thaw();
  });

  afterAll(async () => {
    await b?.close();
    await proxy?.close();
    await a?.close();
  });

  const viewerStatus = async (t: TestApp, token: string) => (await graphql(t.url, '{ viewer { id } }', { privateToken: token })).status;

  it('refuses a personal token on every instance once its revocation has answered, even when notifications are slow', async () => {
    proxy.delayMs = 150;
    const waits: number[] = [];
    for (let trial = 0; trial < 5; trial++) {
      const { user, token, tokenId } = await createUserWithToken(a);
      expect(await viewerStatus(b, token)).toBe(200); // now in B's cache
      expect(await viewerStatus(b, token)).toBe(200);
      const started = performance.now();
      await a.get(PersonalTokensService).revoke(tokenId, user.id);
      waits.push(performance.now() - started);
      expect(await viewerStatus(b, token)).toBe(401);
    }
    // The revoke waited for B's acknowledgement, not for the whole bound.
    expect(Math.max(...waits)).toBeLessThan(1_500);
  });

  it('refuses every credential of a blocked user on every instance once blocking has answered', async () => {
    proxy.delayMs = 150;
    const { user, token } = await createUserWithToken(a);
    expect(await viewerStatus(b, token)).toBe(200);
    await a.get(UsersService).setState(user.username, 'blocked');
    expect(await viewerStatus(b, token)).toBe(401);
  });

  it('refuses an OAuth client whose secret was rotated, on every instance', async () => {
    proxy.delayMs = 150;
    const owner = await createUser(a);
    const client = await registerApp(a, owner.id);
    const exchange = (t: TestApp, secret: string) => unknownCodeError(t.url, client.clientId, secret);
    expect(await exchange(b, client.clientSecret)).toBe('invalid_grant'); // the client is now in B's cache
    await a.get(ApplicationsService).rotateSecret(client.applicationId, owner.id);
    expect(await exchange(b, client.clientSecret)).toBe('invalid_client');
  });

  it('when an instance stops hearing from the database, waits out the bound and that instance no longer trusts its cache', async () => {
    const { user, token, tokenId } = await createUserWithToken(a);
    expect(await viewerStatus(b, token)).toBe(200);
    proxy.freeze();
    const started = performance.now();
    await a.get(PersonalTokensService).revoke(tokenId, user.id);
    const waited = performance.now() - started;
    expect(waited).toBeGreaterThanOrEqual(1_900);
    expect(waited).toBeLessThan(5_000);
    // B cannot answer from its cache any more: it waits for the database, which then says revoked.
    const answer = viewerStatus(b, token);
    setTimeout(() => proxy.thaw(), 300);
    expect(await answer).toBe(401);
  });
});
