import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/config.schema.js';
import { ROOT } from '../support/processes.js';
import { KUBERNETES_DIR, one } from './kubernetes-manifests.js';

// Connections outside the server pods (docs/deploy.md, "Connection budget").
/** The migration Job or `npm run migration:run`: one connection holds the advisory lock, one migrates (src/database/migrate.ts). */
const MIGRATION_CONNECTIONS = 2;
/** One CLI data command: its pool of 2 and its credential-change listener (src/cli/run-command.ts). */
const CLI_CONNECTIONS = 3;
/** Operators running a CLI command at the same time. */
const CLI_SESSIONS = 1;

/** A rolling update's maxSurge as a number of pods at `replicas` (a percentage rounds up, as Kubernetes does; 25 % by default). */
function surgePods(deployment: any, replicas: number): number {
  const surge = deployment.spec.strategy?.rollingUpdate?.maxSurge ?? '25%';
  return typeof surge === 'number' ? surge : Math.ceil((replicas * Number.parseFloat(surge)) / 100);
}

/**
 * Old pods a rolling update has deleted that still hold their connections while they drain (the preStop
 * sleep, then up to SHUTDOWN_TIMEOUT_SECONDS): Kubernetes does not count a terminating pod against
 * maxSurge, so the next surge pod starts meanwhile. With maxUnavailable 0 and maxSurge 1 an old pod is
 * deleted only once its successor is ready: one drains at a time (the count the docs give). Any other
 * strategy can delete several at once, and this count would not hold: undefined.
 */
function drainingPods(deployment: any): number | undefined {
  const { maxSurge, maxUnavailable } = deployment.spec.strategy?.rollingUpdate ?? {};
  return maxSurge === 1 && maxUnavailable === 0 ? 1 : undefined;
}

/** Every connection the manifests can hold at once, against the server the ConfigMap says they are sized for. */
function connectionBudget() {
  const configMap = one('ConfigMap');
  const deployment = one('Deployment');
  const container = deployment.spec.template.spec.containers[0];
  // The server's own view of the settings: the ConfigMap, then the container's env, then the defaults.
  const env = Object.fromEntries((container.env ?? []).filter((e: any) => e.value !== undefined).map((e: any) => [e.name, e.value]));
  const config = loadConfig({
    ...configMap.data,
    ...env,
    DATABASE_URL: 'postgres://agora@db.example.internal/agora',
    SECRET_KEY: 'x9T2kq8Lm3Vp7Rz1Wc5Hy0Nb4Gf6Jd2Sa',
  });
  const annotations = configMap.metadata.annotations ?? {};
  const maxReplicas: number = one('HorizontalPodAutoscaler').spec.maxReplicas;
  const surge = surgePods(deployment, maxReplicas);
  const draining = drainingPods(deployment);
  const workers = config.workers;
  const pool = config.database.poolSize;
  const pods = (maxReplicas + surge + (draining ?? Number.NaN)) * workers * (pool + 1);
  const migrations = one('Job').spec.template.spec.containers[0].command.includes('migration:run') ? MIGRATION_CONNECTIONS : 0;
  const cli = CLI_SESSIONS * CLI_CONNECTIONS;
  const reserved = Number(annotations['agora/database-superuser-reserved-connections']);
  const max = Number(annotations['agora/database-max-connections']);
  return { maxReplicas, surge, draining, workers, pool, pods, migrations, cli, reserved, total: pods + migrations + cli + reserved, max };
}

describe('The connection budget of the Kubernetes manifests (docs/deploy.md, "Connection budget")', () => {
  it('states the PostgreSQL server it is sized for: max_connections and superuser_reserved_connections', () => {
    const { max, reserved } = connectionBudget();
    expect(Number.isInteger(max) && max > 0).toBe(true);
    expect(Number.isInteger(reserved) && reserved >= 0).toBe(true);
  });

  it('counts one draining pod: the rolling update surges one pod and deletes an old one only once its successor is ready', () => {
    expect(connectionBudget().draining).toBe(1);
  });

  it("fits max_connections at the HPA's maximum with a surge pod, a draining pod, the migration Job, one operator's CLI and the superuser reserve", () => {
    const b = connectionBudget();
    expect(b.migrations).toBe(MIGRATION_CONNECTIONS);
    const arithmetic =
      `(${b.maxReplicas} + ${b.surge} + ${b.draining}) × ${b.workers} × (${b.pool} + 1) = ${b.pods}, ` +
      `+ ${b.migrations} + ${b.cli} + ${b.reserved} = ${b.total}, max_connections ${b.max}`;
    expect({ arithmetic, fits: b.total <= b.max }).toEqual({ arithmetic, fits: true });
  });

  it('is the sum the ConfigMap comment and docs/deploy.md state', () => {
    const b = connectionBudget();
    const configMap = readFileSync(join(KUBERNETES_DIR, 'configmap.yaml'), 'utf8');
    expect(configMap).toContain(`(${b.maxReplicas} + ${b.surge} + ${b.draining}) x ${b.workers} x (${b.pool} + 1) = ${b.pods}`);
    expect(configMap).toContain(`= ${b.total} <= max_connections ${b.max}`);
    const deploy = readFileSync(join(ROOT, 'docs/deploy.md'), 'utf8');
    expect(deploy).toContain(`(${b.maxReplicas} + ${b.surge} + ${b.draining}) × ${b.workers} × (${b.pool} + 1) = ${b.pods}`);
    expect(deploy).toContain(`${b.pods} + ${b.migrations} + ${b.cli} + ${b.reserved} = ${b.total}`);
  });

  it('takes a pod out of the Service only after several readiness failures, so a short spike of connection pressure does not', () => {
    const readiness = one('Deployment').spec.template.spec.containers[0].readinessProbe;
    expect(readiness.failureThreshold).toBeGreaterThanOrEqual(2);
  });
});
