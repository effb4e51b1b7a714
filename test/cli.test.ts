import { DataSource } from 'typeorm';
import { graphql } from './support/http.js';
import { Browser, signIn } from './support/browser.js';
import { createUser, TEST_PASSWORD } from './support/fixtures.js';
import { runCli, runCliWithInput } from './support/processes.js';
import { startTestApp, TestApp } from './support/test-app.js';

const VIEWER = '{ viewer { id name } }';

// The server runs (in this process) while the CLI works on the same database: on the embedded
// database the CLI has to go through the server's socket, since only one process may open it.
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe('administration CLI', () => {
  it('creates a user and a token that the running server accepts', async () => {
    const user = await runCli(
      t.databaseEnv,
      'users:create',
      '--username',
      'grace',
      '--email',
      'grace@example.com',
      '--name',
      'Grace Hopper',
      '--password',
      'cobol-compiler-1959',
    );
    expect(user.stderr).toBe('');
    expect(user.code).toBe(0);
    expect(Object.keys(user.json).sort()).toEqual(['id', 'username']);
    expect(user.json.username).toBe('grace');

    const token = await runCli(t.databaseEnv, 'tokens:create', '--user', 'grace', '--name', 'deploy script', '--scopes', 'read_api');
    expect(token.code).toBe(0);
    expect(token.json.token).toMatch(/^agora_pat_/);
    expect(token.json.scopes).toEqual(['read_api']);

    const res = await graphql(t.url, VIEWER, { privateToken: token.json.token });
    expect(res.status).toBe(200);
    expect(res.body.data?.viewer).toEqual({ id: user.json.id, name: 'Grace Hopper' });
  });

  it('revokes a token: the next request fails', async () => {
    await runCli(
      t.databaseEnv,
      'users:create',
      '--username',
      'linus',
      '--email',
      'linus@example.com',
      '--name',
      'Linus',
      '--password',
      'penguin-kernel-1991',
    );
    const token = await runCli(t.databaseEnv, 'tokens:create', '--user', 'linus', '--name', 'ci');
    expect(token.json.scopes).toEqual(['api']);
    expect((await graphql(t.url, VIEWER, { privateToken: token.json.token })).status).toBe(200);

    const revoked = await runCli(t.databaseEnv, 'tokens:revoke', '--id', token.json.id);
    expect(revoked.code).toBe(0);
    expect(revoked.json.revokedAt).toEqual(expect.any(String));
    expect((await graphql(t.url, VIEWER, { privateToken: token.json.token })).status).toBe(401);
  });

  it('blocks a user: their tokens stop working at once', async () => {
    await runCli(
      t.databaseEnv,
      'users:create',
      '--username',
      'mallory',
      '--email',
      'mallory@example.com',
      '--name',
      'Mallory',
      '--password',
      'not-so-trusted-99',
    );
    const token = await runCli(t.databaseEnv, 'tokens:create', '--user', 'mallory', '--name', 'x');
    expect((await graphql(t.url, VIEWER, { privateToken: token.json.token })).status).toBe(200);
    const blocked = await runCli(t.databaseEnv, 'users:block', '--username', 'mallory');
    expect(blocked.json).toMatchObject({ username: 'mallory', state: 'blocked' });
    expect((await graphql(t.url, VIEWER, { privateToken: token.json.token })).status).toBe(401);
  });

  it('shows the secret only once: the database holds its hash alone', async () => {
    await runCli(
      t.databaseEnv,
      'users:create',
      '--username',
      'alan',
      '--email',
      'alan@example.com',
      '--name',
      'Alan',
      '--password',
      'enigma-machine-1941',
    );
    const token = await runCli(t.databaseEnv, 'tokens:create', '--user', 'alan', '--name', 'x');
    const listed = await runCli(t.databaseEnv, 'tokens:list', '--user', 'alan');
    expect(listed.stdout).not.toContain(token.json.token);
    expect(listed.json.tokens).toHaveLength(1);
    const dump = JSON.stringify(await t.get(DataSource).query('SELECT * FROM personal_access_tokens'));
    expect(dump).not.toContain(token.json.token);
  });

  it.each([
    [['users:create', '--username', 'x'], /--email is required/, 2],
    [['users:set-password', '--username', 'nobody', '--password', 'long-enough-pass'], /No user with username "nobody"/, 1],
    [
      ['users:create', '--username', 'bad name', '--email', 'b@example.com', '--name', 'B', '--password', 'long-enough-pass'],
      /Username must be/,
      1,
    ],
    [['tokens:create', '--user', 'nobody', '--name', 'x'], /No user with username "nobody"/, 1],
    [['tokens:create', '--user', 'grace', '--name', 'x', '--scopes', 'openid'], /Scopes must be one or more of: api, read_api/, 1],
    [['tokens:revoke', '--id', 'not-a-uuid'], /No personal access token/, 1],
    [['frobnicate'], /Unknown command "frobnicate"/, 2],
    [['users:create', '--bogus', 'x'], /Unknown option '--bogus'/, 2],
  ])('reports %j on stderr with a non-zero exit and nothing on stdout', async (args, message, code) => {
    const result = await runCli(t.databaseEnv, ...(args as string[]));
    expect(result.code).toBe(code);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(message);
  });

  it('reports every missing flag and every invalid field of users:create at once', async () => {
    const missing = await runCli(t.databaseEnv, 'users:create', '--username', 'x');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--email is required\n--name is required\n--password is required/);
    const invalid = await runCli(
      t.databaseEnv,
      ...['users:create', '--username', 'bad name', '--email', 'nope', '--name', 'B', '--password', 'short'],
    );
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/agora: --username: Username must be/);
    expect(invalid.stderr).toMatch(/agora: --email: Email must be a valid address/);
    expect(invalid.stderr).toMatch(/agora: --password: Password must be at least 10 characters/);
  });

  it("sets a user's password from standard input, and signs them out everywhere", async () => {
    const user = await createUser(t);
    const browser = new Browser(t.url);
    await browser.follow(await signIn(browser, user.username, TEST_PASSWORD));
    expect((await browser.get('/account')).status).toBe(200);

    const weak = await runCliWithInput(t.databaseEnv, 'short\n', 'users:set-password', '--username', user.username, '--password-stdin');
    expect(weak.code).toBe(1);
    expect(weak.stderr).toMatch(/Password must be at least 10 characters/);

    const set = await runCliWithInput(
      t.databaseEnv,
      'a-brand-new-passphrase\n',
      'users:set-password',
      '--username',
      user.username,
      '--password-stdin',
    );
    expect(set.stderr).toBe('');
    expect(set.json).toMatchObject({ username: user.username, sessionsEnded: 1 });
    expect((await browser.get('/account')).status).toBe(303);
    expect((await signIn(new Browser(t.url), user.username, TEST_PASSWORD)).status).toBe(401);
    expect((await signIn(new Browser(t.url), user.username, 'a-brand-new-passphrase')).status).toBe(303);
  });

  it("sets a user's e-mail address, refusing an invalid or taken one", async () => {
    const user = await createUser(t);
    const other = await createUser(t);
    const invalid = await runCli(t.databaseEnv, 'users:set-email', '--username', user.username, '--email', 'nope');
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/--email: Email must be a valid address/);
    const taken = await runCli(t.databaseEnv, 'users:set-email', '--username', user.username, '--email', other.email);
    expect(taken.code).toBe(1);
    const set = await runCli(t.databaseEnv, 'users:set-email', '--username', user.username, '--email', 'moved@example.com');
    expect(set.json).toMatchObject({ username: user.username, email: 'moved@example.com' });
    expect((await signIn(new Browser(t.url), 'moved@example.com', TEST_PASSWORD)).status).toBe(303);
  });

  it('refuses a duplicate username or email, case-insensitively', async () => {
    const result = await runCli(
      t.databaseEnv,
      'users:create',
      '--username',
      'GRACE',
      '--email',
      'other@example.com',
      '--name',
      'G',
      '--password',
      'another-long-pass',
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/Username is already taken/);
    const email = await runCli(
      t.databaseEnv,
      'users:create',
      '--username',
      'grace2',
      '--email',
      'Grace@Example.com',
      '--name',
      'G',
      '--password',
      'another-long-pass',
    );
    expect(email.stderr).toMatch(/This email address cannot be used for a new account/);
    expect(email.stderr).not.toMatch(/argon2|INSERT|PARAMETERS/);
  });

  it('applies migrations idempotently', async () => {
    const result = await runCli(t.databaseEnv, 'migration:run');
    expect(result.code).toBe(0);
    expect(result.json).toEqual({ applied: [] });
  });
});
