import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { ROOT } from '../support/processes.js';

const compose = parse(readFileSync(join(ROOT, 'compose.yaml'), 'utf8'));

/** Each Agora pod template of deploy/kubernetes (the Deployment, the migration Job) with its file name. */
const podTemplates = ['deployment.yaml', 'migrate-job.yaml'].map((file) => {
  const docs = parseAllDocuments(readFileSync(join(ROOT, 'deploy/kubernetes', file), 'utf8')).map((d) => d.toJS());
  const workload = docs.find((d) => d.kind === 'Deployment' || d.kind === 'Job');
  return { file, spec: workload.spec.template.spec };
});

/** Kubernetes quantities as a tmpfs size: 64Mi → 64m. */
const tmpfsSize = (quantity: string) => /^(\d+)Mi$/.exec(quantity)![1] + 'm';

describe('compose.yaml', () => {
  it('starts Agora from the image built here once PostgreSQL and Redis report healthy', () => {
    expect(compose.services.agora.build).toBe('.');
    expect(compose.services.agora.depends_on).toEqual({
      postgres: { condition: 'service_healthy' },
      redis: { condition: 'service_healthy' },
    });
    expect(compose.services.redis.healthcheck.test).toEqual(['CMD', 'redis-cli', 'ping']);
    expect(compose.services.agora.environment.REDIS_URL).toBe('redis://redis:6379/0');
    expect(compose.services.postgres.healthcheck.test).toEqual(expect.arrayContaining([expect.stringContaining('pg_isready')]));
    expect(compose.services.agora.healthcheck.test.join(' ')).toContain('/readyz');
  });

  it('keeps PostgreSQL data in a named volume', () => {
    const [volume] = compose.services.postgres.volumes as string[];
    const name = volume!.split(':')[0]!;
    expect(name).toMatch(/^[a-z]/);
    expect(Object.keys(compose.volumes)).toContain(name);
  });

  it('takes secrets from the environment, required, never written in the file', () => {
    const env = compose.services.agora.environment as Record<string, string>;
    expect(env.SECRET_KEY).toMatch(/^\$\{SECRET_KEY:\?/);
    expect(env.DATABASE_URL).toMatch(/\$\{POSTGRES_PASSWORD:\?[^}]*\}@postgres:5432\//);
    expect(compose.services.postgres.environment.POSTGRES_PASSWORD).toMatch(/^\$\{POSTGRES_PASSWORD:\?/);
  });

  it('gives the drain time to finish before Docker kills the process', () => {
    const grace = Number(/^(\d+)s$/.exec(compose.services.agora.stop_grace_period)![1]);
    expect(grace).toBeGreaterThan(Number(compose.services.agora.environment.SHUTDOWN_TIMEOUT_SECONDS));
  });

  it('runs Agora on a read-only root with the same writable /tmp as every pod of the Kubernetes manifests', () => {
    expect(compose.services.agora.read_only).toBe(true);
    for (const { file, spec } of podTemplates) {
      const [container] = spec.containers;
      expect([file, container.securityContext.readOnlyRootFilesystem]).toEqual([file, true]);
      const mount = container.volumeMounts.find((m: { mountPath: string }) => m.mountPath === '/tmp');
      expect([file, mount?.mountPath]).toEqual([file, '/tmp']);
      const volume = spec.volumes.find((v: { name: string }) => v.name === mount.name);
      expect(compose.services.agora.tmpfs).toEqual([`/tmp:size=${tmpfsSize(volume.emptyDir.sizeLimit)}`]);
    }
  });
});
