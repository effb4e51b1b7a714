import 'reflect-metadata';
import type { DynamicModule, ForwardReference, Provider, Type } from '@nestjs/common';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { createServer } from 'node:net';
import { Writable } from 'node:stream';
import { configureApp, createHttpAdapter } from '../../src/app.factory.js';
import { AppModule } from '../../src/app.module.js';
import { Clock } from '../../src/clock/clock.js';
import { AppConfig, loadConfig } from '../../src/config/config.schema.js';
import { openDatabaseTarget } from '../../src/database/database-target.js';
import { prepareDatabase } from '../../src/database/prepare-database.js';
import { createLogger, PinoNestLogger } from '../../src/logging/logger.js';
import { MetricsListener } from '../../src/metrics/metrics-listener.js';
import { createTestDatabase } from './database.js';
import { TEST_RATE_LIMITS } from './rate-limits.js';

/** Shared by the test app and the CLI processes it starts (same key, same encrypted signing keys). */
export const TEST_SECRET_KEY = 'test-secret-key-4f9a1c7e2b8d6053a1f4c9e7b2d8a6';

/** A clock tests move forward instead of sleeping. */
export class TestClock extends Clock {
  private offsetMs = 0;
  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }
  advance(ms: number): void {
    this.offsetMs += ms;
  }
}

export interface TestApp {
  /** Base URL of the real HTTP listener, e.g. http://127.0.0.1:41234 */
  url: string;
  app: NestFastifyApplication;
  config: AppConfig;
  clock: TestClock;
  /** Environment that points another process (the CLI, a server) at this app's database. */
  databaseEnv: Record<string, string>;
  /** Every log line the app wrote, as parsed JSON. */
  logs: Record<string, unknown>[];
  get<T>(type: abstract new (...args: never[]) => T): T;
  close(): Promise<void>;
}

// Ports handed out below the kernel's ephemeral range (32768–60999 on Linux), where no outgoing
// connection takes one between the probe and the server's listen (port 0 picks from that range, and
// did collide: EADDRINUSE in a test server's listen). Random, so parallel test processes rarely meet;
// the probe checks, and this process never hands out one port twice.
const PORT_RANGE = { low: 15_000, high: 32_700 };
const handedOut = new Set<number>();

/** A port free on 127.0.0.1 now, for a server whose address must be known before it listens. */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < 50; tries++) {
    const port = PORT_RANGE.low + Math.floor(Math.random() * (PORT_RANGE.high - PORT_RANGE.low));
    if (handedOut.has(port)) continue;
    if (await canListen(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error(`no free port found in ${PORT_RANGE.low}–${PORT_RANGE.high}`);
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * Starts the whole service on a database of its own, listening on a real port. `databaseEnv`: run on
 * another test app's database instead (its `databaseEnv`; PostgreSQL only, as an embedded directory
 * opens in one process), left in place on close.
 */
export async function startTestApp(
  env: Record<string, string> = {},
  extra: {
    controllers?: Type[];
    /** Providers added to the application (a test's job handlers), and the modules they need (`JobsModule`). */
    providers?: Provider[];
    imports?: (Type | DynamicModule | ForwardReference)[];
    port?: number;
    databaseEnv?: Record<string, string>;
    /** false: skip the start-up check of the connections (to see what run time does with what it would refuse). */
    checkPooling?: boolean;
  } = {},
): Promise<TestApp> {
  const database = extra.databaseEnv ? { env: extra.databaseEnv, drop: async () => undefined } : await createTestDatabase();
  const port = extra.port ?? (await freePort());
  const url = `http://127.0.0.1:${port}`;
  const config = loadConfig({
    NODE_ENV: 'test',
    // Cheap password hashes (argon2id at its least cost): thousands of sign-ins a run (docs/configuration.md).
    PASSWORD_HASH_COST: 'test',
    LOG_LEVEL: 'info',
    BASE_URL: url,
    SECRET_KEY: TEST_SECRET_KEY,
    ...TEST_RATE_LIMITS,
    ...database.env,
    ...env,
  });
  const target = await openDatabaseTarget(config);
  await prepareDatabase(config, target, { migrate: true, checkPooling: extra.checkPooling });

  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const logger = createLogger(config, sink);
  const clock = new TestClock();
  const moduleRef = await Test.createTestingModule({
    imports: [AppModule.forRoot(config, target), ...(extra.imports ?? [])],
    controllers: extra.controllers ?? [],
    providers: extra.providers ?? [],
  })
    .overrideProvider(Clock)
    .useValue(clock)
    .setLogger(new PinoNestLogger(logger))
    .compile();
  const app = moduleRef.createNestApplication<NestFastifyApplication>(createHttpAdapter(config, logger), {
    logger: new PinoNestLogger(logger),
  });
  await configureApp(app);
  await app.init();
  await app.listen({ port, host: '127.0.0.1' });
  await app.get(MetricsListener).listen();

  return {
    url,
    app,
    config,
    clock,
    databaseEnv: { ...database.env, SECRET_KEY: TEST_SECRET_KEY },
    logs,
    get: (type) => app.get(type as never),
    async close() {
      await app.close();
      await target.close();
      await database.drop();
    },
  };
}
