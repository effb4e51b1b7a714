import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigMap, Secret, Service } from 'kubernetes-models/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { Job } from 'kubernetes-models/batch/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { parseAllDocuments } from 'yaml';
import { loadConfig } from '../../src/config/config.schema.js';
import { READINESS_TIMEOUT_MS } from '../../src/health/probe-bounds.js';
import { ROOT } from '../support/processes.js';
import { execForm, parseDockerfile } from './dockerfile.js';
import { KUBERNETES_DIR as DIR, manifests, one } from './kubernetes-manifests.js';

const MODELS: Record<string, new (data: any) => { validate(): void }> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'batch/v1/Job': Job,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
};

describe('Kubernetes manifests (deploy/kubernetes)', () => {
  it('are each a valid object of the Kubernetes API (kubernetes-models schemas)', () => {
    expect(manifests.length).toBeGreaterThanOrEqual(7);
    for (const { file, object } of manifests) {
      const Model = MODELS[`${object.apiVersion}/${object.kind}`];
      expect({ file, kind: `${object.apiVersion}/${object.kind}`, known: Boolean(Model) }).toEqual({
        file,
        kind: expect.any(String),
        known: true,
      });
      expect(() => new Model!(object).validate()).not.toThrow();
    }
  });

  it('the validator rejects a broken object, so the check above means something', () => {
    const deployment = structuredClone(one('Deployment'));
    deployment.spec.template.spec.containers[0].ports[0].containerPort = 'http';
    expect(() => new Deployment(deployment).validate()).toThrow(/containerPort must be integer/);
  });

  it('the kustomization lists every manifest but the Secret template and the migration Job', () => {
    const kustomization = parseAllDocuments(readFileSync(join(DIR, 'kustomization.yaml'), 'utf8'))[0]!.toJS();
    const files = [...new Set(manifests.map((m) => m.file))].filter((f) => !['secret.example.yaml', 'migrate-job.yaml'].includes(f));
    expect([...kustomization.resources].sort()).toEqual(files.sort());
  });

  it('runs the image as it is built: the Dockerfile CMD, non-root, read-only root filesystem, no privilege', () => {
    const dockerfile = parseDockerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
    const cmd = execForm(dockerfile.stages.at(-1)!.instructions.find((i) => i.keyword === 'CMD')!.args);
    const user = Number(
      dockerfile.stages
        .at(-1)!
        .instructions.find((i) => i.keyword === 'USER')!
        .args.split(':')[0],
    );
    for (const kind of ['Deployment', 'Job']) {
      const pod = one(kind).spec.template.spec;
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: user });
      expect(pod.automountServiceAccountToken).toBe(false);
      for (const container of pod.containers) {
        expect(container.securityContext).toMatchObject({
          readOnlyRootFilesystem: true,
          allowPrivilegeEscalation: false,
          capabilities: { drop: ['ALL'] },
        });
        expect(container.resources.requests).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) });
        expect(container.resources.limits).toMatchObject({ memory: expect.any(String) });
        expect(container.envFrom).toEqual([{ configMapRef: { name: 'agora' } }, { secretRef: { name: 'agora' } }]);
      }
    }
    expect(one('Deployment').spec.template.spec.containers[0].command).toEqual(cmd);
    expect(one('Job').spec.template.spec.containers[0].command).toEqual([cmd![0], 'dist/src/cli/main.js', 'migration:run']);
  });

  it('probes /readyz and /healthz on the container port the Service targets', () => {
    const deployment = one('Deployment');
    const service = one('Service');
    const container = deployment.spec.template.spec.containers[0];
    const port = container.ports.find((p: any) => p.name === 'http');
    expect(port.containerPort).toBe(Number(one('ConfigMap').data.PORT));
    expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(container.startupProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(service.spec.ports.map((p: any) => p.targetPort)).toEqual(['http']);
    expect(service.spec.selector).toEqual(deployment.spec.template.metadata.labels);
    expect(deployment.spec.selector.matchLabels).toEqual(deployment.spec.template.metadata.labels);
    expect(one('PodDisruptionBudget').spec.selector.matchLabels).toEqual(deployment.spec.template.metadata.labels);
    expect(one('Job').spec.template.metadata.labels).not.toEqual(deployment.spec.template.metadata.labels);
  });

  it("gives each probe a timeout: readiness above its own bound on the database's answer, liveness one that a blocked event loop fails", () => {
    const container = one('Deployment').spec.template.spec.containers[0];
    expect(container.readinessProbe.timeoutSeconds * 1000).toBeGreaterThan(READINESS_TIMEOUT_MS);
    expect(container.livenessProbe.timeoutSeconds).toBeGreaterThanOrEqual(1);
    // Liveness restarts only after several failures: a wedged pool keeps failing it, one slow answer does not.
    expect(container.livenessProbe.failureThreshold).toBeGreaterThanOrEqual(3);
  });

  it('gives the pod more than the preStop sleep plus the drain bound (SHUTDOWN_TIMEOUT_SECONDS) to stop', () => {
    const pod = one('Deployment').spec.template.spec;
    const sleep = pod.containers[0].lifecycle.preStop.sleep.seconds as number;
    const bound = Number(one('ConfigMap').data.SHUTDOWN_TIMEOUT_SECONDS ?? 10);
    expect(sleep).toBeGreaterThan(0);
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(sleep + bound);
  });

  // Within the database's connections: connection-budget.test.ts.
  it('scales several replicas with an HPA and a PDB that leave some serving', () => {
    const deployment = one('Deployment');
    const hpa = one('HorizontalPodAutoscaler');
    expect(deployment.spec.replicas).toBeGreaterThanOrEqual(2);
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: deployment.metadata.name });
    expect(hpa.spec.minReplicas).toBe(deployment.spec.replicas);
    expect(one('PodDisruptionBudget').spec.maxUnavailable).toBeLessThan(hpa.spec.minReplicas);
  });

  it('runs one server process per pod (WORKERS=1), so the kubelet probes and restarts each process', () => {
    expect(one('ConfigMap').data.WORKERS).toBe('1');
  });

  it('the ConfigMap is a valid configuration, and the Secret template holds placeholders the server refuses', () => {
    const data = one('ConfigMap').data as Record<string, string>;
    const secret = one('Secret').stringData as Record<string, string>;
    expect(Object.keys(secret).sort()).toEqual(['DATABASE_URL', 'SECRET_KEY']);
    expect(Object.keys(data).filter((k) => /SECRET|PASSWORD|DATABASE_URL/.test(k))).toEqual([]);
    expect(() => loadConfig({ ...data, DATABASE_URL: secret.DATABASE_URL, SECRET_KEY: 'x9T2kq8Lm3Vp7Rz1Wc5Hy0Nb4Gf6Jd2Sa' })).not.toThrow();
    expect(() => loadConfig({ ...data, ...secret })).toThrow(/SECRET_KEY: looks like a placeholder/);
  });
});
