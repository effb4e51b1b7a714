import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { validate } from 'dockerfile-utils';
import pg from 'pg';
import { ROOT } from '../support/processes.js';
import { BuiltImage, buildWithoutDocker, dockerignore, envPairs, execForm, parseDockerfile, run } from './dockerfile.js';

const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
const dockerfile = parseDockerfile(text);
const final = dockerfile.stages.at(-1)!;
const finalOf = (keyword: string) => final.instructions.filter((i) => i.keyword === keyword);
const SECRET_NAME = /SECRET|PASSWORD|PASSWD|TOKEN|KEY|CREDENTIAL|DATABASE_URL/i;

describe('Dockerfile, read', () => {
  it('has no problem the Dockerfile linter (dockerfile-utils) reports, warnings included', () => {
    const problems = validate(text).map((p) => `line ${p.range.start.line + 1}: ${p.message}`);
    expect(problems).toEqual([]);
  });

  it('the linter does report a broken instruction, so the check above means something', () => {
    const problems = validate('FROM node:24\nHEALTHCHECK --interva=30s CMD ["node"]\n').map((p) => p.message);
    expect(problems).toContain('Unknown flag: interva');
  });

  it('builds every stage from one NODE_IMAGE on the newest Node line that package.json engines claims', () => {
    const image = dockerfile.globalArgs
      .map((i) => i.args)
      .find((a) => a.startsWith('NODE_IMAGE='))
      ?.slice('NODE_IMAGE='.length);
    expect(dockerfile.stages.map((s) => s.base)).toEqual(dockerfile.stages.map(() => '${NODE_IMAGE}'));
    const major = /^node:(\d+)[.-]/.exec(image ?? '')?.[1];
    const { engines } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
    // engines names each supported line as ^major.minor.patch (docs/deploy.md#nodejs-versions).
    const lines = engines.node.split('||').map((range) => /^\^(\d+)\.\d+\.\d+$/.exec(range.trim())?.[1]);
    expect({ engines: engines.node, unreadable: lines.includes(undefined) }).toEqual({ engines: engines.node, unreadable: false });
    expect({ image, major }).toEqual({ image, major: String(Math.max(...lines.map(Number))) });
  });

  it('runs the final stage as a non-root user given by number, so Kubernetes runAsNonRoot can check it', () => {
    const users = finalOf('USER').map((i) => i.args);
    expect(users).toHaveLength(1);
    expect(users[0]).toMatch(/^\d+(:\d+)?$/);
    expect(Number(users[0]!.split(':')[0])).toBeGreaterThan(0);
  });

  it('declares a HEALTHCHECK on the final stage, in exec form on /healthz', () => {
    const [check] = finalOf('HEALTHCHECK');
    expect(check).toBeDefined();
    const command = execForm(check!.args.replace(/^CMD\s+/, ''));
    expect(command?.[0]).toBe('node');
    expect(command!.join(' ')).toContain('/healthz');
  });

  it('starts node itself in exec form, so SIGTERM reaches the server: no shell, no npm, no entrypoint', () => {
    expect(finalOf('ENTRYPOINT')).toEqual([]);
    const cmd = finalOf('CMD');
    expect(cmd).toHaveLength(1);
    expect(execForm(cmd[0]!.args)).toEqual(['node', 'dist/src/main.js']);
    for (const stop of finalOf('STOPSIGNAL')) expect(stop.args).toBe('SIGTERM');
  });

  it('copies node_modules only from a stage that installed production dependencies (npm ci --omit=dev)', () => {
    const copies = finalOf('COPY').filter((i) => /(^|\s|\/)node_modules\b/.test(i.args));
    expect(copies).toHaveLength(1);
    const from = dockerfile.stages.find((s) => s.name === copies[0]!.flags.from);
    expect(from?.instructions.filter((i) => i.keyword === 'RUN').map((i) => i.args)).toEqual(['npm ci --omit=dev']);
  });

  it('bakes no secret: no ARG or ENV names one, and .dockerignore keeps .env, data/ and .git out of the context', () => {
    const declared = [
      ...dockerfile.globalArgs.map((i) => i.args.split('=')[0]!),
      ...dockerfile.stages
        .flatMap((s) => s.instructions)
        .flatMap((i) => (i.keyword === 'ARG' ? [i.args.split('=')[0]!] : i.keyword === 'ENV' ? Object.keys(envPairs(i.args)) : [])),
    ];
    expect(declared.filter((name) => SECRET_NAME.test(name))).toEqual([]);
    const ignored = dockerignore(readFileSync(join(ROOT, '.dockerignore'), 'utf8'));
    for (const path of [
      '.env',
      'data/secret.key',
      'data/pgdata/base/1',
      '.git/config',
      'node_modules/pg/package.json',
      'dist/src/main.js',
    ]) {
      expect({ path, ignored: ignored.ignored(path) }).toEqual({ path, ignored: true });
    }
    expect(ignored.ignored('src/main.ts')).toBe(false);
    expect(ignored.ignored('src/events/events.graphql')).toBe(false);
    expect(ignored.ignored('docs/legacy-to-graphql.md')).toBe(false);
    expect(ignored.ignored('docs/operations.md')).toBe(true);
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort();
}

describe('the image, built without Docker and run with its own command and environment', () => {
  let image: BuiltImage;
  let cleanup: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    image = await buildWithoutDocker(ROOT, {
      // The build stage's full install: the project's own node_modules, installed by `npm ci` from the
      // same package-lock.json (the stage copied it from the context).
      'npm ci': async (cwd) => symlinkSync(join(ROOT, 'node_modules'), join(cwd, 'node_modules')),
      'npm run build': (cwd) => run('npm', ['run', '-s', 'build'], cwd),
      // For real: the production dependencies the image gets (from npm's cache when it has them).
      'npm ci --omit=dev': (cwd) => run('npm', ['ci', '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund'], cwd),
    });
    cleanup.push(async () => image.remove());
  }, 600_000);

  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
    cleanup = [];
  });

  it('holds production dependencies only, and the files the server reads at run time', () => {
    const app = join(image.root, image.workdir);
    // typescript is not among them: @nestjs/graphql and @nestjs/swagger depend on it.
    for (const devOnly of ['jest', 'ts-jest', 'eslint', 'prettier', 'playwright-core', 'dockerfile-utils', 'kubernetes-models']) {
      expect({ devOnly, present: existsSync(join(app, 'node_modules', devOnly)) }).toEqual({ devOnly, present: false });
    }
    for (const path of [
      'dist/src/main.js',
      'dist/src/cli/main.js',
      'package.json',
      'schema.graphql',
      'src/events/events.graphql',
      'assets/app.css',
    ]) {
      expect({ path, present: existsSync(join(app, path)) }).toEqual({ path, present: true });
    }
    expect(image.contextFiles.filter((f) => /\.spec\.ts$|^\.env$|^data\//.test(f))).toEqual([]);
  });

  it('answers /readyz 200, serves the schema, assets, vendor files and the guide, passes its HEALTHCHECK, and drains on SIGTERM', async () => {
    const app = join(image.root, image.workdir);
    const asRoot = process.getuid?.() === 0;
    const [uid, gid] = (image.user ?? '0').split(':').map(Number) as [number, number | undefined];
    // As root, run as the image's USER over files root owns, as in the container: a write into the
    // image would fail. Otherwise as this user (the write check then relies on the listing below).
    const identity = asRoot ? { uid, gid: gid ?? uid } : {};
    if (asRoot) chmodSync(dirname(image.root), 0o755);

    const database: Record<string, string> = {};
    const adminUrl = process.env.DATABASE_URL;
    if (adminUrl) {
      const name = `agora_image_${process.pid}`;
      const admin = async (sql: string) => {
        const client = new pg.Client({ connectionString: adminUrl });
        await client.connect();
        await client.query(sql).finally(() => client.end());
      };
      await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin(`CREATE DATABASE ${name}`);
      cleanup.push(() => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
      const url = new URL(adminUrl);
      url.pathname = `/${name}`;
      database.DATABASE_URL = url.toString();
    } else {
      // The embedded database, in a directory of the image user's own (the image has none).
      const dir = mkdtempSync(join(tmpdir(), 'agora-image-data-'));
      if (asRoot) chownSync(dir, uid, gid ?? uid);
      cleanup.push(async () => rmSync(dir, { recursive: true, force: true }));
      database.DATA_DIR = dir;
      database.DATABASE_URL = '';
    }

    const port = await freePort();
    // The container's environment: the image's ENV, what the operator passes, and a PATH to node.
    const env = {
      ...image.env,
      PATH: `${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
      ...database,
      SECRET_KEY: randomBytes(32).toString('base64'),
      PORT: String(port),
    };
    expect(image.env.NODE_ENV).toBe('production');
    const before = filesUnder(app);

    const command = [...(image.entrypoint ?? []), ...(image.cmd ?? [])];
    const server: ChildProcess = spawn(command[0]!, command.slice(1), { cwd: app, env, ...identity, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    server.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    server.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    const exited = once(server, 'exit').then(([code]) => code as number | null);
    cleanup.push(async () => void server.kill('SIGKILL'));

    const base = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 90_000;
    let ready = 0;
    while (ready !== 200) {
      if (server.exitCode !== null || Date.now() > deadline) throw new Error(`the server did not become ready:\n${output}`);
      ready = await fetch(`${base}/readyz`).then(
        (r) => r.status,
        () => 0,
      );
      if (ready !== 200) await new Promise((r) => setTimeout(r, 200));
    }

    const graphql = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __type(name: "Event") { name } }' }),
    });
    expect(await graphql.json()).toEqual({ data: { __type: { name: 'Event' } } });
    expect((await fetch(`${base}/assets/app.css`)).status).toBe(200);
    const { version } = JSON.parse(readFileSync(join(app, 'node_modules/graphiql/package.json'), 'utf8')) as { version: string };
    expect((await fetch(`${base}/assets/vendor/graphiql-${version}.js`)).status).toBe(200);
    const guide = await fetch(`${base}/api/migration-guide`);
    expect(guide.status).toBe(200);
    expect(await guide.text()).toContain('GraphQL');

    const check = execForm(image.healthcheck!.args.replace(/^CMD\s+/, ''))!;
    const probe = spawn(check[0]!, check.slice(1), { cwd: app, env, ...identity, stdio: 'ignore' });
    expect((await once(probe, 'exit'))[0]).toBe(0);

    server.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const code = await Promise.race([
      exited,
      new Promise<string>((r) => (timer = setTimeout(() => r('still running after 15 s'), 15_000))),
    ]);
    clearTimeout(timer);
    expect({ code, output }).toEqual({ code: 0, output: expect.stringMatching(/"signal":"SIGTERM".*Shutting down[\s\S]*"msg":"Stopped"/) });
    expect(filesUnder(app)).toEqual(before);
  }, 180_000);
});
