import pg from 'pg';
import { DataSource } from 'typeorm';
import { EmbeddedPostgres } from '../src/database/embedded-postgres.js';
import { serverUrl } from './support/database.js';
import { createUser, createUserWithToken } from './support/fixtures.js';
import { graphql } from './support/http.js';
import { registerApp, unknownCodeError } from './support/oauth.js';
import { runCli } from './support/processes.js';
import { startTestApp, TestApp } from './support/test-app.js';

// The embedded database caches verified credentials like a PostgreSQL server does. Whatever revokes
// one (this process, the CLI through the socket, an operator's SQL), the request after the revocation
// has answered is refused: the server hears the trigger's notification before the revoking client
// hears that its commit succeeded.
const onEmbedded = serverUrl() ? describe.skip : describe;

onEmbedded('revocation on the embedded database, with the credential cache on', () => {
  let t: TestApp;
  let operator: pg.Client;
  const heardByOperator: string[] = [];

  beforeAll(async () => {
    t = await startTestApp();
    const endpoint = (await EmbeddedPostgres.runningEndpoint(t.databaseEnv.DATA_DIR!))!;
    operator = new pg.Client({ ...endpoint, user: 'postgres', database: 'postgres' });
    operator.on('notification', (message) => heardByOperator.push(`${message.channel} ${message.payload}`));
    await operator.connect();
  });

  afterAll(async () => {
    await operator?.end();
    await t?.close();
  });

  const viewerStatus = async (token: string) => (await graphql(t.url, '{ viewer { id } }', { privateToken: token })).status;
  const revokeSql = 'UPDATE personal_access_tokens SET revoked_at = now() WHERE id = $1';

  /** The SQL statements `action` makes this server run that mention `table`. */
  async function statementsOn(table: string, action: () => Promise<unknown>): Promise<string[]> {
    const logger = t.get(DataSource).logger;
    const original = logger.logQuery.bind(logger);
    const seen: string[] = [];
    logger.logQuery = (sql, ...rest) => {
      if (sql.includes(table)) seen.push(sql);
      return original(sql, ...rest);
    };
    try {
      await action();
    } finally {
      logger.logQuery = original;
    }
    return seen;
  }

  /**
   * Accepted from memory: no read of the token's table (a suspended cache would read it). The
   * `last_used_at` touch is left out: the request before may have started it without waiting for it,
   * so under load it ran while this one was watched.
   */
  async function expectCachedAcceptance(token: string): Promise<void> {
    const reads = (await statementsOn('personal_access_tokens', async () => expect(await viewerStatus(token)).toBe(200))).filter(
      (sql) => !/^UPDATE personal_access_tokens SET last_used_at/.test(sql),
    );
    expect(reads).toEqual([]);
  }

  const exchange = (clientId: string, clientSecret: string) => unknownCodeError(t.url, clientId, clientSecret);

  it('answers a personal token and an OAuth client it has verified from memory, without reading them again', async () => {
    const { token } = await createUserWithToken(t);
    expect(await statementsOn('personal_access_tokens', () => viewerStatus(token))).not.toEqual([]);
    await expectCachedAcceptance(token);

    const client = await registerApp(t, (await createUser(t)).id);
    expect(await exchange(client.clientId, client.clientSecret)).toBe('invalid_grant');
    const second = await statementsOn('oauth_applications', async () =>
      expect(await exchange(client.clientId, client.clientSecret)).toBe('invalid_grant'),
    );
    expect(second).toEqual([]);
  });

  it('refuses a cached personal token as soon as tokens:revoke, run by the CLI through the socket, has answered', async () => {
    for (let trial = 0; trial < 2; trial++) {
      const { token, tokenId } = await createUserWithToken(t);
      expect(await viewerStatus(token)).toBe(200);
      await expectCachedAcceptance(token);
      const revoked = await runCli(t.databaseEnv, 'tokens:revoke', '--id', tokenId);
      expect(revoked.stderr).toBe('');
      expect(revoked.code).toBe(0);
      expect(await viewerStatus(token)).toBe(401);
    }
  });

  it('refuses every cached token of a user as soon as users:block has answered', async () => {
    const { user, token } = await createUserWithToken(t);
    expect(await viewerStatus(token)).toBe(200);
    await expectCachedAcceptance(token);
    const blocked = await runCli(t.databaseEnv, 'users:block', '--user', user.username);
    expect(blocked.json).toMatchObject({ username: user.username, state: 'blocked' });
    expect(await viewerStatus(token)).toBe(401);
  });

  it('refuses a cached OAuth client as soon as apps:rotate-secret has answered, and accepts the new secret', async () => {
    const client = await registerApp(t, (await createUser(t)).id);
    expect(await exchange(client.clientId, client.clientSecret)).toBe('invalid_grant');
    const fromMemory = await statementsOn('oauth_applications', async () =>
      expect(await exchange(client.clientId, client.clientSecret)).toBe('invalid_grant'),
    );
    expect(fromMemory).toEqual([]);
    const rotated = await runCli(t.databaseEnv, 'apps:rotate-secret', '--id', client.applicationId);
    expect(rotated.code).toBe(0);
    expect(await exchange(client.clientId, client.clientSecret)).toBe('invalid_client');
    expect(await exchange(client.clientId, rotated.json.clientSecret as string)).toBe('invalid_grant');
  });

  it('refuses a cached token revoked by SQL on the socket, committed alone or in a transaction, and tells that client nothing', async () => {
    const autocommit = await createUserWithToken(t);
    const inTransaction = await createUserWithToken(t);
    for (const { token } of [autocommit, inTransaction]) expect(await viewerStatus(token)).toBe(200);

    await operator.query(revokeSql, [autocommit.tokenId]);
    expect(await viewerStatus(autocommit.token)).toBe(401);
    expect(await viewerStatus(inTransaction.token)).toBe(200);

    // (No request in between: while a client's transaction is open, PGlite serves no other client.)
    await operator.query('BEGIN');
    await operator.query(revokeSql, [inTransaction.tokenId]);
    await operator.query('COMMIT');
    expect(await viewerStatus(inTransaction.token)).toBe(401);

    expect(heardByOperator).toEqual([]);
  });

  it('still refuses revoked tokens after a client ends the shared session’s LISTEN (UNLISTEN *, DISCARD ALL)', async () => {
    for (const statement of ['UNLISTEN *', 'DISCARD ALL']) {
      const { token, tokenId } = await createUserWithToken(t);
      expect(await viewerStatus(token)).toBe(200);
      await operator.query(statement);
      await operator.query(revokeSql, [tokenId]);
      expect(await viewerStatus(token)).toBe(401);
      // Listening again, and caching again.
      const next = await createUserWithToken(t);
      expect(await viewerStatus(next.token)).toBe(200);
      await expectCachedAcceptance(next.token);
      await operator.query(revokeSql, [next.tokenId]);
      expect(await viewerStatus(next.token)).toBe(401);
    }
  });

  it('still refuses a revoked token after a client ends LISTEN with a statement it prepared long before (Bind and Execute only)', async () => {
    const unlisten = { name: 'unlisten_later', text: 'UNLISTEN *' };
    await operator.query(unlisten); // Parse, Bind, Execute: noticed, and LISTEN is issued again
    const { token, tokenId } = await createUserWithToken(t);
    expect(await viewerStatus(token)).toBe(200);
    await expectCachedAcceptance(token);
    await operator.query(unlisten); // the driver only binds and executes it now
    await operator.query(revokeSql, [tokenId]);
    expect(await viewerStatus(token)).toBe(401);
  });

  it('refuses a cached token whose revocation was committed by an exchange that ends inside a new transaction', async () => {
    const { token, tokenId } = await createUserWithToken(t);
    expect(await viewerStatus(token)).toBe(200);
    await expectCachedAcceptance(token);
    // PostgreSQL sends the session its notification only when it is idle again, at the next COMMIT.
    await operator.query(`BEGIN; UPDATE personal_access_tokens SET revoked_at = now() WHERE id = '${tokenId}'; COMMIT; BEGIN`);

    // The request is answered from memory or waits for the database (busy with the operator's transaction).
    const logger = t.get(DataSource).logger;
    const original = logger.logQuery.bind(logger);
    let reading!: () => void;
    const readsToken = new Promise<void>((resolve) => (reading = resolve));
    logger.logQuery = (sql, ...rest) => {
      if (sql.includes('personal_access_tokens')) reading();
      return original(sql, ...rest);
    };
    try {
      const status = viewerStatus(token);
      // Or two seconds: a request that must first open a connection (the pool's idle one closed under
      // load) waits before any statement is logged, and the engine opens none while the transaction is open.
      await Promise.race([readsToken, status, new Promise((resolve) => setTimeout(resolve, 2000))]);
      await operator.query('COMMIT');
      expect(await status).toBe(401);
    } finally {
      logger.logQuery = original;
    }
  });
});
