import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { ApplicationsService } from '../src/oauth/clients/applications.service.js';
import type { User } from '../src/users/user.model.js';
import { Browser, formFields, signIn } from './support/browser.js';
import { createUser, TEST_PASSWORD } from './support/fixtures.js';
import { childrenOf, commandLine, ROOT, waitForHttp } from './support/processes.js';
import { freePort, startTestApp, TestApp } from './support/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

interface Example {
  url: string;
  /** npm's own process: the example runs as `npm run example:oauth-client`, as its README says. */
  npm: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}
const running: Example[] = [];
afterEach(() => {
  for (const example of running.splice(0)) {
    for (const pid of childrenOf(example.npm.pid!)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    example.npm.kill('SIGKILL');
  }
});

/** Registers the example's application for `owner` (its README's apps:create) and starts the example with npm. */
async function startExample(owner: User, scopes = ['openid', 'profile', 'api']): Promise<Example> {
  const port = await freePort();
  const url = `http://localhost:${port}`;
  const { application, clientSecret } = await t.get(ApplicationsService).create(owner.id, {
    name: 'Example client',
    redirectUris: [`${url}/callback`],
    postLogoutRedirectUris: [`${url}/signed-out`],
    scopes,
  });
  const npm = spawn('npm', ['run', '-s', 'example:oauth-client'], {
    cwd: ROOT,
    env: {
      ...process.env,
      npm_config_update_notifier: 'false',
      AGORA_URL: t.url,
      PORT: String(port),
      EXAMPLE_URL: url,
      AGORA_CLIENT_ID: application.clientId,
      AGORA_CLIENT_SECRET: clientSecret!,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  npm.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  npm.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = once(npm, 'close').then(([code]) => code as number | null);
  const example = { url, npm, output: () => output, exited };
  running.push(example);
  await waitForHttp(`${url}/`, { child: npm, output: () => output, exited });
  return example;
}

/** One person's browser, which holds cookies for both sites: the example's and Agora's. */
function person(example: Example) {
  return { app: new Browser(example.url), agora: new Browser(t.url) };
}

/** "Sign in with Agora", sign in, and choose `decision` on the consent page; returns the example's answer to the callback. */
async function signInThroughExample(
  example: Example,
  user: User,
  decision: 'approve' | 'deny',
  browser = person(example),
): Promise<{ callback: Response; browser: ReturnType<typeof person> }> {
  const login = await browser.app.get('/login');
  expect(login.status).toBe(302);
  const authorize = new URL(login.headers.get('location')!);
  expect(authorize.origin).toBe(t.url);
  const atAgora = await browser.agora.get(authorize.pathname + authorize.search);
  // Signed in to Agora already (a second try): the consent page at once.
  const returnTo = atAgora.status === 200 ? null : new URL(atAgora.headers.get('location')!, t.url).searchParams.get('return_to')!;
  const consent = returnTo
    ? (await browser.agora.follow(await signIn(browser.agora, user.username, TEST_PASSWORD, returnTo))).res
    : atAgora;
  expect(consent.status).toBe(200);
  const decided = await browser.agora.post('/oauth/authorize', { ...formFields(await consent.text()), decision });
  const callback = new URL(decided.headers.get('location')!);
  expect(callback.origin).toBe(example.url);
  return { callback: await browser.app.get(callback.pathname + callback.search), browser };
}

async function home(browser: Browser): Promise<string> {
  const res = await browser.get('/');
  expect(res.status).toBe(200);
  return res.text();
}

it('signs two users in at once and signs out only the one who asks, through Agora’s logout endpoint', async () => {
  const ada = await createUser(t, { name: 'Ada Example' });
  const grace = await createUser(t, { name: 'Grace Example' });
  const example = await startExample(ada);

  const first = await signInThroughExample(example, ada, 'approve');
  expect(first.callback.status).toBe(302);
  expect(await home(first.browser.app)).toContain(`Signed in as <strong>Ada Example</strong> (${ada.id})`);
  const second = await signInThroughExample(example, grace, 'approve');
  expect(await home(second.browser.app)).toContain(`Signed in as <strong>Grace Example</strong> (${grace.id})`);

  // Ada signs out: the example sends her browser to Agora's end_session_endpoint with her id_token.
  const logout = await first.browser.app.get('/logout');
  expect(logout.status).toBe(302);
  const endSession = new URL(logout.headers.get('location')!);
  expect(`${endSession.origin}${endSession.pathname}`).toBe(`${t.url}/oauth/logout`);
  expect(endSession.searchParams.get('post_logout_redirect_uri')).toBe(`${example.url}/signed-out`);
  expect(endSession.searchParams.get('id_token_hint')).toMatch(/^eyJ/);
  const state = endSession.searchParams.get('state');
  expect(state).toBeTruthy();

  const atAgora = await first.browser.agora.get(endSession.pathname + endSession.search);
  expect(atAgora.status).toBe(302);
  const back = new URL(atAgora.headers.get('location')!);
  expect(`${back.origin}${back.pathname}`).toBe(`${example.url}/signed-out`);
  expect(back.searchParams.get('state')).toBe(state);
  const signedOut = await first.browser.app.get(back.pathname + back.search);
  expect(signedOut.status).toBe(200);
  expect(await signedOut.text()).toContain('You are signed out of this application and of Agora.');

  // Ada is signed out of the example and of Agora; Grace, in her own browser, is still signed in to both.
  expect(await home(first.browser.app)).toContain('Sign in with Agora');
  expect((await first.browser.agora.get('/')).status).toBe(303);
  expect(await home(second.browser.app)).toContain(`Signed in as <strong>Grace Example</strong> (${grace.id})`);
  expect((await second.browser.agora.get('/')).status).toBe(200);
});

it('tells the user who chose Deny that nothing was shared, and lets them try again', async () => {
  const user = await createUser(t);
  const example = await startExample(user);
  const { callback, browser } = await signInThroughExample(example, user, 'deny');
  expect(callback.status).toBe(200);
  const text = await callback.text();
  expect(text).toContain('You chose not to sign in with Agora. Nothing was shared with this application.');
  expect(text).toContain('<a href="/login">Sign in with Agora</a>');
  expect(await home(browser.app)).toContain('Sign in with Agora');
  // Trying again works: the same browser approves this time.
  const again = await signInThroughExample(example, user, 'approve', browser);
  expect(again.callback.status).toBe(302);
  expect(await home(browser.app)).toContain(`Signed in as <strong>${user.name}</strong>`);
});

it('answers an error Agora sends back, and a callback it did not start, with a page rather than a 500', async () => {
  const user = await createUser(t);
  // Registered without the "api" scope the example asks for: Agora answers invalid_scope by redirect.
  const example = await startExample(user, ['openid', 'profile']);
  const browser = person(example);
  const login = await browser.app.get('/login');
  const refused = await browser.agora.get(
    new URL(login.headers.get('location')!).pathname + new URL(login.headers.get('location')!).search,
  );
  expect(refused.status).toBe(302);
  const callback = new URL(refused.headers.get('location')!);
  expect(callback.searchParams.get('error')).toBe('invalid_scope');
  const page = await browser.app.get(callback.pathname + callback.search);
  expect(page.status).toBe(400);
  const text = await page.text();
  expect(text).toContain('data-error="invalid_scope"');
  expect(text).toContain('The application is misconfigured.');

  // The same answer again (a reload), or one forged for another browser: refused before anything reaches Agora.
  expect((await browser.app.get(callback.pathname + callback.search)).status).toBe(400);
  const stranger = new Browser(example.url);
  const forged = await stranger.get(`/callback?error=access_denied&state=${callback.searchParams.get('state')}`);
  expect(forged.status).toBe(400);
  expect(await forged.text()).toContain('This sign-in was not started in this browser');
  expect(example.output()).not.toMatch(/Error/);
});

describe('stopping it', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)('stops the server when npm’s process gets %s', async (signal) => {
    const user = await createUser(t);
    const example = await startExample(user);
    // No shell between npm and the server: npm passes the signal to its child, and a shell would die of it alone.
    const children = childrenOf(example.npm.pid!);
    expect(children.map((pid) => commandLine(pid))).toEqual([
      expect.stringMatching(/^(\S*\/)?node .*examples\/oauth-client\/server\.mjs$/),
    ]);
    process.kill(example.npm.pid!, signal);
    let timer: NodeJS.Timeout | undefined;
    const code = await Promise.race([
      example.exited,
      new Promise<'still running'>((r) => (timer = setTimeout(() => r('still running'), 10_000))),
    ]);
    clearTimeout(timer);
    expect(code).not.toBe('still running');
    for (let i = 0; i < 50 && commandLine(children[0]!); i++) await new Promise((r) => setTimeout(r, 100));
    expect(commandLine(children[0]!)).toBeUndefined();
    await expect(fetch(`${example.url}/`)).rejects.toThrow();
  });
});
