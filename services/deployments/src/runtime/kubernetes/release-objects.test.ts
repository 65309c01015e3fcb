import {
  APP_SELECTOR,
  type DeploymentSpec,
  type K8sObject,
  type KubernetesRunnerSettings,
} from './objects';
import { releaseObjects as releaseObjectsOf } from './release-objects';
import { sampleDeployment, sampleImage, sampleRunnerSettings } from '../../test/kubernetes-samples';

const settings = sampleRunnerSettings;
const spec = sampleDeployment;
/** A release of the image its build pushed. */
const releaseObjects = (these: KubernetesRunnerSettings, deployment: DeploymentSpec) =>
  releaseObjectsOf(these, deployment, sampleImage(deployment));

const byKind = (objects: K8sObject[], kind: string) => objects.find((o) => o.kind === kind)!;

describe('a release’s objects', () => {
  it('keeps the variables out of every release object but the Secret', () => {
    const objects = releaseObjects(settings, spec());
    const elsewhere = objects.filter((o) => o.kind !== 'Secret').map((o) => JSON.stringify(o));
    for (const text of elsewhere) expect(text).not.toContain('tok-secret-123');
    const secrets = objects.filter((o) => o.kind === 'Secret').map((o) => JSON.stringify(o));
    expect(secrets.every((text) => text.includes('tok-secret-123'))).toBe(true);
  });

  it('rolls a release out with no unavailable replica, ready on the health check', () => {
    const deployment = byKind(releaseObjects(settings, spec()), 'Deployment') as any;
    expect(deployment.spec.strategy.rollingUpdate).toEqual({ maxUnavailable: 0, maxSurge: 1 });
    expect(deployment.spec.template.spec.containers[0].readinessProbe.httpGet).toEqual({
      path: '/healthz',
      port: 8080,
    });
    // Limited to its CPU, reserving a fraction of it (a node holds many idle apps); its memory
    // reserved as limited; its disk (what it writes, its log) limited.
    expect(deployment.spec.template.spec.containers[0].resources).toEqual({
      requests: { cpu: '50m', memory: '512Mi' },
      limits: { cpu: '500m', memory: '512Mi', 'ephemeral-storage': '114Mi' },
    });
    // A replaced pod serves on until kube-proxy has taken it out of the Service.
    expect(deployment.spec.template.spec.containers[0].lifecycle).toEqual({
      preStop: { sleep: { seconds: 5 } },
    });
    const ingress = byKind(releaseObjects(settings, spec()), 'Ingress') as any;
    expect(ingress.spec.rules[0].host).toBe(`${spec().serviceId}.apps.example.com`);
  });

  it('labels a release’s pods with its deployment, which the selector leaves out', () => {
    const deployment = byKind(releaseObjects(settings, spec()), 'Deployment') as any;
    expect(deployment.spec.template.metadata.labels).toMatchObject({
      'platform.dev/deployment-id': spec().deploymentId,
    });
    expect(deployment.spec.selector.matchLabels).not.toHaveProperty('platform.dev/deployment-id');
    for (const object of releaseObjects(settings, spec())) {
      expect(Object.entries(object.metadata.labels ?? {}).map(([k, v]) => `${k}=${v}`)).toEqual(
        expect.arrayContaining(APP_SELECTOR.split(',')),
      );
    }
  });
});
