import { k8s, kubeConfigOf } from '@platform/kube';
import { waitFor } from '@platform/shared/testing';
import type { DeploymentStatus } from '../deployments/status';
import type { Harness } from '../test/harness';
import { useKubernetesHarness } from '../test/kubernetes-harness';
import type { OwnedService } from '../test/projects-stub';
import { deployCommit, probe, servedCommit } from '../test/served-app';

/**
 * The real pipeline with RUNTIME=kubernetes on the local cluster (docs/kubernetes-runner.md): git
 * fetches the fixture repository here, the build runs in a Job, the app in a Deployment, and its
 * URL answers through the router the service serves (RUNTIME_ROUTER_PORT, as the gateway calls it).
 */

const k = useKubernetesHarness();
const { h, buildNamespace: BUILD_NAMESPACE } = k;

/** A build Job, an image pull and a rollout: tens of seconds, more on a loaded machine. */
const ROLLOUT = 240_000;
const TEST = 600_000;

const deploy = (
  harness: Harness,
  service: OwnedService,
  commitHash: string,
  status: DeploymentStatus,
) => deployCommit(harness, service, commitHash, status, ROLLOUT);

/** The build Jobs in the builds' namespace while `during` runs (those there before included). */
async function jobsCreatedDuring(during: () => Promise<void>): Promise<string[]> {
  const created: string[] = [];
  const watching = await new k8s.Watch(kubeConfigOf(k.cluster())).watch(
    `/apis/batch/v1/namespaces/${BUILD_NAMESPACE}/jobs`,
    {},
    (phase: string, job: { metadata?: { name?: string } }) => {
      if (phase === 'ADDED') created.push(job.metadata?.name ?? '');
    },
    () => undefined,
  );
  try {
    await during();
  } finally {
    watching.abort();
  }
  return created;
}

// Before 'the pipeline on Kubernetes', whose last test stops the harness's worker.
describe('a tenant’s commands on Kubernetes', () => {
  it(
    'a build command and a start command that start with a dash run as scripts, not as options of the shell',
    async () => {
      const { service, id } = await h.newDeployment(
        {},
        {
          buildCommand: '-x 2>/dev/null\necho build-ran-as-a-script\nnode build.js',
          startCommand: '-x 2>/dev/null\necho app-ran-as-a-script\nexec node server.js',
        },
      );

      const deployed = await h.waitForStatus(service, id, 'DEPLOYED', ROLLOUT);
      const app = await k.appLogOnce(service, id, 'app-ran-as-a-script', ROLLOUT);

      expect(deployed.logs).toContain('build-ran-as-a-script');
      // `sh -c -x` would have traced every command it ran.
      expect(deployed.logs).not.toContain('+ echo');
      expect(app).not.toContain('+ echo');
    },
    TEST,
  );
});

describe('the pipeline on Kubernetes', () => {
  let service: OwnedService;
  let firstId: string;

  it(
    'builds the commit in a Job and serves it from a Deployment at the service’s URL',
    async () => {
      const created = await h.newDeployment();
      service = created.service;
      firstId = created.id;

      const deployed = await h.waitForStatus(service, firstId, 'DEPLOYED', ROLLOUT);

      expect(JSON.parse((await h.app(service)).body)).toMatchObject({
        commit: h.firstCommit.revision,
        greeting: 'hello',
      });
      expect(deployed.logs).toContain(`==> fetching commit ${h.firstCommit.hash}`);
      expect(deployed.logs).toContain('==> running the build command in a Job: node build.js');
      expect(deployed.logs).toContain(`built revision ${h.firstCommit.revision}`);
      expect(deployed.logs).toContain("==> the service's URL now serves this deployment");
      expect(await h.changes(firstId)).toEqual([
        '->BUILDING',
        'BUILDING>DEPLOYING',
        'DEPLOYING>DEPLOYED',
      ]);
    },
    TEST,
  );

  it(
    'fails a build that fails, with its exit code, and the live release keeps serving',
    async () => {
      const broken = await h.appRepository.commit({ failBuild: true });

      const failed = await deploy(h, service, broken.hash, 'FAILED');

      expect(failed.logs).toContain('The build command failed with exit code 1.');
      expect(await servedCommit(h, service)).toBe(h.firstCommit.revision);
    },
    TEST,
  );

  it(
    'fails a release that never becomes healthy while the previous one answers every request',
    async () => {
      const sick = await h.appRepository.commit({ neverHealthy: true });
      const answers: string[] = [];
      let probing = true;
      const probe = (async () => {
        while (probing) answers.push(await servedCommit(h, service).catch((e: Error) => e.message));
      })();

      const failed = await deploy(h, service, sick.hash, 'FAILED');
      probing = false;
      await probe;

      expect(failed.logs).toMatch(/The app did not become healthy: progress deadline exceeded/);
      expect(failed.logs).toContain(`==> deployment ${firstId} serves again`);
      expect(answers.length).toBeGreaterThan(0);
      expect(new Set(answers)).toEqual(new Set([h.firstCommit.revision]));
      expect(await servedCommit(h, service)).toBe(h.firstCommit.revision);
    },
    TEST,
  );

  it(
    'rolls back to a kept image without building: no Job is created',
    async () => {
      const next = await h.appRepository.commit({ greeting: 'second' });
      const probing = probe(h, service);
      await deploy(h, service, next.hash, 'DEPLOYED');
      // DEPLOYED: the URL serves the new release, and no visitor met an error on the way.
      expect(await servedCommit(h, service)).toBe(next.revision);
      const answers = await probing.stop();
      expect(answers.filter((a) => a !== h.firstCommit.revision && a !== next.revision)).toEqual(
        [],
      );
      let rollbackId = '';

      const jobs = await jobsCreatedDuring(async () => {
        const res = await h.api.rollback(service, firstId);
        expect(res.status).toBe(201);
        rollbackId = res.body.id as string;
        const rolledBack = await h.waitForStatus(service, rollbackId, 'DEPLOYED', ROLLOUT);
        expect(rolledBack.logs).toContain(`==> reusing the image of deployment ${firstId}`);
      });

      expect(rollbackId).not.toBe('');
      expect(jobs).not.toContain(`build-${rollbackId}`);
      expect(await servedCommit(h, service)).toBe(h.firstCommit.revision);
    },
    TEST,
  );

  it(
    'cancels a build: its Job and pod are deleted, the deployment CANCELLED',
    async () => {
      const slow = await h.appRepository.commit({
        files: { 'build.js': 'console.log("building slowly"); setTimeout(() => {}, 600000);' },
      });
      const res = await h.api.trigger(service, { commitHash: slow.hash });
      const id = res.body.id as string;
      await waitFor(
        async () => (await h.api.get(service, id)).body.logs.includes('building slowly'),
        {
          timeoutMs: ROLLOUT,
          what: 'the build to print',
        },
      );

      expect((await h.api.cancel(service, id)).status).toBe(200);

      await h.waitForStatus(service, id, 'CANCELLED', ROLLOUT);
      const batch = kubeConfigOf(k.cluster()).makeApiClient(k8s.BatchV1Api);
      await waitFor(
        async () =>
          (await batch.listNamespacedJob({ namespace: BUILD_NAMESPACE })).items.every(
            (job) => job.metadata?.name !== `build-${id}`,
          ),
        { timeoutMs: 60_000, what: 'the Job to be deleted' },
      );
      expect(await servedCommit(h, service)).toBe(h.firstCommit.revision);
    },
    TEST,
  );

  it(
    'lets the newest deployment win: an older one superseded never becomes live',
    async () => {
      const older = await h.appRepository.commit({ greeting: 'older' });
      const newer = await h.appRepository.commit({ greeting: 'newer' });

      const first = await h.api.trigger(service, { commitHash: older.hash });
      const second = await h.api.trigger(service, { commitHash: newer.hash });

      await h.waitForStatus(service, second.body.id as string, 'DEPLOYED', ROLLOUT);
      const olderNow = await h.api.get(service, first.body.id as string);
      expect(olderNow.body.status).toBe('CANCELLED');
      expect(await servedCommit(h, service)).toBe(newer.revision);
    },
    TEST,
  );

  it(
    'runs `replicas` copies: each of the three answers through the service’s URL',
    async () => {
      const whoami = await h.appRepository.commit({
        files: {
          'server.js':
            "require('node:http').createServer((q, r) => r.end(require('node:os').hostname())).listen(process.env.PORT);",
        },
      });
      const { service: three, id } = await h.newDeployment(
        { commitHash: whoami.hash },
        { replicas: 3 },
      );
      await h.waitForStatus(three, id, 'DEPLOYED', ROLLOUT);

      const hosts = new Set<string>();
      for (let i = 0; i < 60 && hosts.size < 3; i++) hosts.add((await h.app(three)).body);

      expect(hosts.size).toBe(3);
    },
    TEST,
  );

  it(
    'carries on after the deployments service restarts mid-rollout: no pod replaced',
    async () => {
      const slowStart = await h.appRepository.commit({ listenAfterSeconds: 8 });
      const res = await h.api.trigger(service, { commitHash: slowStart.hash });
      const id = res.body.id as string;
      await h.waitForStatus(service, id, 'DEPLOYING', ROLLOUT);
      const podsOf = () => k.podsOf(service, id);
      await waitFor(async () => (await podsOf()).length > 0, {
        timeoutMs: ROLLOUT,
        what: 'the new release’s pod',
      });
      const before = (await podsOf()).map((p) => p.metadata!.uid);

      // The replica stops (its worker hands the deployment back), another one takes it on.
      await h.worker!.stop();
      const next = await h.newWorker();
      next.start();
      try {
        const deployed = await h.waitForStatus(service, id, 'DEPLOYED', ROLLOUT);
        expect(deployed.logs).toContain("==> the service's URL now serves this deployment");
      } finally {
        await next.stop();
      }

      const after = await podsOf();
      expect(after.map((p) => p.metadata!.uid)).toEqual(before);
      expect(after.every((p) => (p.status?.containerStatuses?.[0]?.restartCount ?? 0) === 0)).toBe(
        true,
      );
      expect(await servedCommit(h, service)).toBe(slowStart.revision);
    },
    TEST,
  );
});
