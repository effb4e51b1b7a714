import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { Browser, formFields, signIn } from './support/browser.js';
import { createUser, TEST_PASSWORD } from './support/fixtures.js';
import { registerPublicApp } from './support/oauth.js';
import { ROOT } from './support/processes.js';
import { startTestApp, TestApp } from './support/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

/** Runs examples/device-client as its README says; `approve` acts on the code it prints. */
async function runExample(clientId: string, act: (userCode: string, verificationUri: string) => Promise<void>) {
  const example = spawn('node', [resolve(ROOT, 'examples/device-client/device.mjs')], {
    env: { ...process.env, AGORA_URL: t.url, AGORA_CLIENT_ID: clientId, AGORA_CLIENT_SECRET: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | null>((done) => example.on('exit', done));
  const prompt = new Promise<RegExpExecArray>((found, failed) => {
    const look = () => {
      const match = /open (\S+) in a browser and enter the code ([A-Z]{4}-[A-Z]{4})/.exec(output);
      if (match) found(match);
    };
    example.stdout.on('data', (d: Buffer) => ((output += d.toString()), look()));
    example.stderr.on('data', (d: Buffer) => (output += d.toString()));
    void exited.then(() => failed(new Error(`the example exited before showing a code:\n${output}`)));
  });
  try {
    const [, verificationUri, userCode] = await prompt;
    await act(userCode!, verificationUri!);
    return { code: await exited, output };
  } finally {
    example.kill('SIGTERM');
  }
}

async function decideInBrowser(userCode: string, verificationUri: string, decision: 'approve' | 'deny', username: string) {
  expect(verificationUri).toBe(`${t.url}/oauth/device`);
  const browser = new Browser(t.url);
  await signIn(browser, username, TEST_PASSWORD);
  // The link fills the form in; the user confirms the code by submitting it (RFC 8628 §3.3.1).
  const filled = await browser.get(`/oauth/device?user_code=${userCode.toLowerCase()}`);
  expect(filled.status).toBe(200);
  const consent = await browser.post('/oauth/device', formFields(await filled.text()));
  expect(consent.status).toBe(200);
  const decided = await browser.post('/oauth/device', { ...formFields(await consent.text()), decision });
  expect(decided.status).toBe(303);
}

it('examples/device-client signs a user in with the device flow and shows their name from the API', async () => {
  const user = await createUser(t, { name: 'Ada Example' });
  const app = await registerPublicApp(t, user.id, { scopes: ['openid', 'profile', 'api'] });
  const { code, output } = await runExample(app.clientId, (userCode, uri) => decideInBrowser(userCode, uri, 'approve', user.username));
  expect(output).toContain(`Signed in: id_token for ${user.username}`);
  expect(output).toContain(`Signed in as Ada Example (${user.id})`);
  expect(code).toBe(0);
});

it('examples/device-client stops with a message when the user denies', async () => {
  const user = await createUser(t);
  const app = await registerPublicApp(t, user.id, { scopes: ['openid', 'profile', 'api'] });
  const { code, output } = await runExample(app.clientId, (userCode, uri) => decideInBrowser(userCode, uri, 'deny', user.username));
  expect(output).toContain('You denied the request: nothing was shared.');
  expect(code).toBe(2);
});
