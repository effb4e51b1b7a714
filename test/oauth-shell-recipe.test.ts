import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { Browser, formFields, signIn } from './support/browser.js';
import { createUser, TEST_PASSWORD } from './support/fixtures.js';
import { graphql } from './support/http.js';
import { registerPublicApp } from './support/oauth.js';
import { ROOT } from './support/processes.js';
import { startTestApp, TestApp } from './support/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

/** The shell blocks of docs/oauth.md's "Trying it from a shell" section, as a reader copies them. */
function recipe(): string[] {
  const guide = readFileSync(resolve(ROOT, 'docs/oauth.md'), 'utf8');
  const start = guide.indexOf('## Trying it from a shell');
  const section = guide.slice(start, guide.indexOf('\n## ', start + 1));
  return [...section.matchAll(/^( *)```sh\n([\s\S]*?)^\1```$/gm)].map(([, indent, body]) =>
    body!
      .split('\n')
      .map((line) => line.slice(indent!.length))
      .join('\n'),
  );
}

const run = promisify(execFile);
/** Runs `script` with sh, as a reader's shell would, with `env` set; its standard output. */
async function sh(script: string, env: Record<string, string> = {}): Promise<string> {
  const { stdout } = await run('sh', ['-c', script], { env: { PATH: process.env.PATH, ...env } });
  return stdout;
}

it('docs/oauth.md’s shell recipe makes a PKCE pair and gets a code without a server, which its curl exchanges for a working token', async () => {
  const [pair, authorize, exchange, ...more] = recipe();
  expect(more).toEqual([]);

  // 1. The pair, as the reader's shell would leave it in its variables.
  const [verifier, challenge, state] = (await sh(`${pair}\nprintf '%s %s %s' "$VERIFIER" "$CHALLENGE" "$STATE"`)).split(' ');
  expect(verifier).toMatch(/^[A-Za-z0-9_-]{43,128}$/);
  expect(challenge).toBe(createHash('sha256').update(verifier!).digest('base64url'));
  expect(state).toMatch(/^[0-9a-f]{32}$/);

  // 2. The address to open, for a public application registered with http://127.0.0.1/callback.
  const user = await createUser(t, { name: 'Shell User' });
  const app = await registerPublicApp(t, user.id, { redirectUris: ['http://127.0.0.1/callback'], scopes: ['openid', 'api'] });
  const address = new URL((await sh(authorize, { AGORA: t.url, CLIENT_ID: app.clientId, CHALLENGE: challenge!, STATE: state! })).trim());
  const browser = new Browser(t.url);
  const toSignIn = await browser.get(address.pathname + address.search);
  const returnTo = new URL(toSignIn.headers.get('location')!, t.url).searchParams.get('return_to')!;
  const consent = (await browser.follow(await signIn(browser, user.username, TEST_PASSWORD, returnTo))).res;
  expect(consent.status).toBe(200);
  const approved = await browser.post('/oauth/authorize', { ...formFields(await consent.text()), decision: 'approve' });
  // What the address bar shows: nothing listens on port 8765, and nothing needs to.
  const addressBar = new URL(approved.headers.get('location')!);
  expect(`${addressBar.origin}${addressBar.pathname}`).toBe('http://127.0.0.1:8765/callback');
  expect(addressBar.searchParams.get('state')).toBe(state);

  // 3. The exchange, with the code copied from there.
  const answer = JSON.parse(
    await sh(exchange!, { AGORA: t.url, CLIENT_ID: app.clientId, CODE: addressBar.searchParams.get('code')!, VERIFIER: verifier! }),
  ) as Record<string, unknown>;
  expect(answer).toMatchObject({ token_type: 'Bearer', scope: 'openid api', access_token: expect.stringMatching(/^agora_oat_/) });
  const viewer = await graphql(t.url, '{ viewer { id name } }', { bearer: answer.access_token as string });
  expect(viewer.body.data).toEqual({ viewer: { id: user.id, name: 'Shell User' } });
});
