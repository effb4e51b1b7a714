import { ApplicationsService } from '../src/oauth/applications.service.js';
import { Browser, formFields, signIn } from './support/browser.js';
import { createUser, TEST_PASSWORD } from './support/fixtures.js';
import { waitForHttp, ROOT } from './support/processes.js';
import { freePort, startTestApp, TestApp } from './support/test-app.js';
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

it('examples/oauth-client signs a user in through Agora and shows their name from the API', async () => {
  const user = await createUser(t, { name: 'Ada Example' });
  const port = await freePort();
  const exampleUrl = `http://localhost:${port}`;
  const { application, clientSecret } = await t.get(ApplicationsService).create(user.id, {
    name: 'Example client',
    redirectUris: [`${exampleUrl}/callback`],
    scopes: ['openid', 'profile', 'api'],
  });
  const example = spawn('node', [resolve(ROOT, 'examples/oauth-client/server.mjs')], {
    env: {
      ...process.env,
      AGORA_URL: t.url,
      PORT: String(port),
      EXAMPLE_URL: exampleUrl,
      AGORA_CLIENT_ID: application.clientId,
      AGORA_CLIENT_SECRET: clientSecret,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  example.stdout.on('data', (d: Buffer) => (output += d.toString()));
  example.stderr.on('data', (d: Buffer) => (output += d.toString()));
  try {
    await waitForHttp(`${exampleUrl}/`, { child: example, output: () => output, exited: Promise.resolve(null) });
    const app = new Browser(exampleUrl);
    const agora = new Browser(t.url);

    const login = await app.get('/login');
    expect(login.status).toBe(302);
    const authorize = new URL(login.headers.get('location')!);
    expect(authorize.origin).toBe(t.url);

    const toSignIn = await agora.get(authorize.pathname + authorize.search);
    const returnTo = new URL(toSignIn.headers.get('location')!, t.url).searchParams.get('return_to')!;
    const consent = (await agora.follow(await signIn(agora, user.username, TEST_PASSWORD, returnTo))).res;
    expect(consent.status).toBe(200);
    const approved = await agora.post('/oauth/authorize', { ...formFields(await consent.text()), decision: 'approve' });
    const callback = new URL(approved.headers.get('location')!);
    expect(callback.origin).toBe(exampleUrl);

    const back = await app.get(callback.pathname + callback.search);
    expect(back.status).toBe(302);
    const home = await app.get('/');
    expect(await home.text()).toContain(`Signed in as <strong>Ada Example</strong> (${user.id})`);
  } finally {
    example.kill('SIGTERM');
  }
});
