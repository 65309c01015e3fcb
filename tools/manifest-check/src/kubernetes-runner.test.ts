import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  CHECKER_BUILD_TIMEOUT_MS,
  REPO_ROOT,
  describeProblems,
  loadDockerfile,
  renderKustomization,
  type K8sObject,
  type KustomizeResult,
} from './checker';

/**
 * The objects the deployments service's Kubernetes runner would create
 * (services/deployments/src/runtime/kubernetes/objects.ts, docs/kubernetes-runner.md), generated
 * by its own code for a sample deployment and run through the API server's decoding, defaulting
 * and validation, as `kubectl apply` would have them checked. No cluster is involved.
 */
const runner = require(
  path.join(REPO_ROOT, 'services/deployments/src/runtime/kubernetes/objects.ts'),
) as Record<string, (...args: any[]) => any>;

const tenancy = require(
  path.join(REPO_ROOT, 'services/deployments/src/runtime/kubernetes/tenancy.ts'),
) as Record<string, (...args: any[]) => any>;

const samples = require(
  path.join(REPO_ROOT, 'services/deployments/src/test/kubernetes-samples.ts'),
) as { sampleRunnerSettings: unknown; sampleDeployment: () => unknown };
const settings = samples.sampleRunnerSettings;
const deployment = samples.sampleDeployment();

/** Writes `objects` as a kustomization of their own and renders it through the checker. */
async function validate(objects: K8sObject[]): Promise<KustomizeResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'runner-objects-'));
  try {
    const files = objects.map((object, index) => {
      const file = `${index}-${object.kind.toLowerCase()}.json`;
      fs.writeFileSync(path.join(dir, file), JSON.stringify(object));
      return file;
    });
    fs.writeFileSync(
      path.join(dir, 'kustomization.yaml'),
      `resources:\n${files.map((f) => `  - ${f}\n`).join('')}`,
    );
    return await renderKustomization(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('the Kubernetes runner (generated objects, not run against a cluster)', () => {
  let build: KustomizeResult;
  let release: KustomizeResult;
  let namespaces: KustomizeResult;

  beforeAll(async () => {
    build = await validate(runner.buildObjects!(settings, deployment));
    release = await validate(runner.releaseObjects!(settings, deployment));
    namespaces = await validate([
      ...tenancy.projectNamespaceObjects!(settings, (deployment as any).projectId),
      ...tenancy.buildNamespaceObjects!(settings),
    ]);
  }, CHECKER_BUILD_TIMEOUT_MS);

  it.each([
    ['the build (ConfigMap, Secret, Job)', () => build, ['ConfigMap', 'Secret', 'Job']],
    [
      'the release (Secret, Deployment, Service, Ingress)',
      () => release,
      ['Secret', 'Deployment', 'Service', 'Ingress'],
    ],
    [
      'the project’s namespace (policies, quota, limits) and the builds’ namespace',
      () => namespaces,
      [
        'Namespace',
        'NetworkPolicy',
        'NetworkPolicy',
        'ResourceQuota',
        'LimitRange',
        'Namespace',
        'NetworkPolicy',
        'NetworkPolicy',
      ],
    ],
  ])('%s pass the API server validation', (_what, result, kinds) => {
    expect(describeProblems(result().problems)).toBe('');
    expect(
      result()
        .objects.map((o) => o.kind)
        .sort(),
    ).toEqual([...kinds].sort());
  });

  it('gives the build Job no retry, a deadline and no service account token', () => {
    const job = build.objects.find((o) => o.kind === 'Job')!;
    expect(job.spec.backoffLimit).toBe(0);
    expect(job.spec.activeDeadlineSeconds).toBe(600);
    expect(job.spec.template.spec.automountServiceAccountToken).toBe(false);
  });

  it('runs the app as a non-root user with no privilege, within limits', () => {
    const app = release.objects.find((o) => o.kind === 'Deployment')!;
    const container = app.spec.template.spec.containers[0];
    expect(container.securityContext).toMatchObject({
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
    expect(container.resources.limits).toEqual({
      cpu: '500m',
      memory: '512Mi',
      'ephemeral-storage': '114Mi',
    });
    expect(app.spec.template.spec.automountServiceAccountToken).toBe(false);
  });

  it('writes a Dockerfile that BuildKit loads without a failed check, running as the app user', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'runner-dockerfile-'));
    try {
      const file = path.join(dir, 'Dockerfile');
      fs.writeFileSync(file, runner.dockerfileOf!(settings, deployment));
      const result = await loadDockerfile(file);
      expect(describeProblems(result.problems)).toBe('');
      expect(result.warnings).toEqual([]);
      expect(result.image).toMatchObject({
        User: '1000:1000',
        WorkingDir: '/workspace/web',
        Cmd: ['sh', '-c', '--', 'node server.js'],
        Env: expect.arrayContaining(['PORT=8080']),
      });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
