import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { connectMongo, writeWithoutRelay } from '@platform/shared';
import { testInfraUrls, testLogger, waitFor } from '@platform/shared/testing';
import { deploymentModels } from '../deployments/deployments.model';
import { startHarness, newCommitHash, testPipelineOptions, type Harness } from '../test/harness';
import { isProcessRunning, killQuietly, LONG_STEP, pidsWrittenBy } from '../test/processes';
import { PipelineWorker } from './pipeline.worker';

let h: Harness;
let pidDir: string;
const leftovers: number[] = [];
const LEASE_MS = 1_500;

beforeAll(async () => {
  h = await startHarness();
  pidDir = await mkdtemp(path.join(tmpdir(), 'recovery-test-'));
});
afterAll(async () => {
  killQuietly(leftovers);
  await h.close();
  await rm(pidDir, { recursive: true, force: true });
});

const commandEnv = () => ({ ...testPipelineOptions().commandEnv, PID_DIR: pidDir });

const statusesQueued = (id: string) => h.changes(id);

/** The lease a worker killed in the middle of an attempt leaves behind. */
async function abandonedBy(owner: string, deploymentId: string, attempt: number, leaseUntil: Date) {
  const doc = await h.document(deploymentId);
  await h.models.leases.create({
    _id: `${deploymentId}#${attempt}`,
    deploymentId,
    projectId: doc!.projectId,
    serviceId: doc!.serviceId,
    attempt,
    owner,
    leaseUntil,
    released: false,
  });
}

describe('a pipeline worker that stops without finishing', () => {
  it('loses its lease, and another worker runs the build again from the start to DEPLOYED', async () => {
    // Worker A has its own connection, like a process of its own; closing it cuts A off from the
    // database mid-build, so it can neither renew its lease nor finish: a dead worker to the others.
    const { mongoUrl } = testInfraUrls();
    const connectionA = await connectMongo({
      url: mongoUrl,
      dbName: h.connection.name,
      logger: testLogger(),
    });
    const workerA = new PipelineWorker({
      ...testPipelineOptions(),
      models: deploymentModels(connectionA),
      logger: testLogger(),
      outbox: writeWithoutRelay,
      buildCommand: LONG_STEP,
      commandEnv: commandEnv(),
      leaseMs: LEASE_MS,
    });
    const workerB = h.newWorker({
      buildCommand: 'echo "rebuilt $DEPLOYMENT_ID"',
      leaseMs: LEASE_MS,
    });
    workerA.start();
    try {
      const service = h.projects.addService();
      const created = await h.api.trigger(service, { commitHash: newCommitHash() });
      const id = created.body.id;
      const pids = await pidsWrittenBy(pidDir, id);
      leftovers.push(...pids);
      await waitFor(async () => (await h.logs(id)).includes('long step of'), {
        what: 'A’s output in the logs',
      });
      expect(await h.leases(id)).toEqual([
        { attempt: 1, owner: workerA.workerId, released: false },
      ]);

      await connectionA.close(true);
      workerB.start();

      const deployed = await h.waitForStatus(service, id, 'DEPLOYED', 20_000);
      expect(deployed.logs).toContain(`long step of ${id} started`);
      expect(deployed.logs).toContain(
        '--- Attempt 2: the pipeline worker running this deployment stopped responding. ---',
      );
      expect(deployed.logs).toContain(`rebuilt ${id}`);
      expect(deployed.logs.indexOf('long step of')).toBeLessThan(
        deployed.logs.indexOf(`rebuilt ${id}`),
      );
      await h.released(id);
      expect(await h.leases(id)).toEqual([
        { attempt: 1, owner: workerA.workerId, released: false },
        { attempt: 2, owner: workerB.workerId, released: true },
      ]);
      expect(await statusesQueued(id)).toEqual([
        '->BUILDING',
        'BUILDING>DEPLOYING',
        'DEPLOYING>DEPLOYED',
      ]);
      // A, cut off, stopped its own build once its lease had run out.
      for (const pid of pids) expect(await isProcessRunning(pid)).toBe(false);
    } finally {
      await workerB.stop();
      await workerA.stop();
    }
  });

  it('runs again only the deploy step of a deployment abandoned while DEPLOYING', async () => {
    const service = h.projects.addService();
    const created = await h.api.trigger(service, { commitHash: newCommitHash() });
    const id = created.body.id;
    // What a worker killed during the deploy step leaves behind: DEPLOYING, its lease running out.
    const leaseUntil = new Date(Date.now() + 500);
    await abandonedBy('a-worker-that-was-killed', id, 1, leaseUntil);
    const repository = h.repository;
    expect(
      await repository.transition((await repository.findById(id))!, 'DEPLOYING', 1),
    ).not.toBeNull();
    await h.models.logs.updateOne(
      { _id: id },
      {
        $set: {
          logs: '==> build step started\nbuilt\n==> build step finished in 0.1 s\n==> deploy step started\n',
        },
      },
    );
    const worker = h.newWorker({
      buildCommand: 'echo build-ran-again',
      deployCommand: 'echo "deployed $COMMIT_HASH"',
    });
    worker.start();
    try {
      const deployed = await h.waitForStatus(service, id, 'DEPLOYED');

      expect(deployed.logs).not.toContain('build-ran-again');
      expect(deployed.logs).toContain(`deployed ${created.body.commitHash}`);
      expect(deployed.logs).toContain('--- Attempt 2');
      await h.released(id);
      expect(await h.leases(id)).toEqual([
        { attempt: 1, owner: 'a-worker-that-was-killed', released: false },
        { attempt: 2, owner: worker.workerId, released: true },
      ]);
    } finally {
      await worker.stop();
    }
  });

  it('fails a deployment whose workers disappeared on every one of its attempts', async () => {
    const service = h.projects.addService();
    const created = await h.api.trigger(service, { commitHash: newCommitHash() });
    const id = created.body.id;
    for (const attempt of [1, 2, 3]) {
      await abandonedBy(`killed-worker-${attempt}`, id, attempt, new Date(Date.now() - 1));
    }
    const worker = h.newWorker({ buildCommand: 'echo build-ran', maxAttempts: 3 });
    worker.start();
    try {
      const failed = await h.waitForStatus(service, id, 'FAILED');

      expect(failed.logs).toContain('Gave up after 3 attempts.');
      expect(failed.logs).not.toContain('build-ran');
      expect(await statusesQueued(id)).toEqual(['->BUILDING', 'BUILDING>FAILED']);
    } finally {
      await worker.stop();
    }
  });
});

describe('a deployment whose creation event was never recorded', () => {
  it('gets it from the worker that claims it, before its other events', async () => {
    const service = h.projects.addService();
    const created = await h.api.trigger(service, { commitHash: newCommitHash() });
    // As if the API process stopped between inserting the deployment and its first event.
    await h.models.transitions.deleteMany({ deploymentId: created.body.id });

    const worker = h.newWorker({});
    worker.start();
    try {
      await h.waitForStatus(service, created.body.id, 'DEPLOYED');

      expect(await statusesQueued(created.body.id)).toEqual([
        '->BUILDING',
        'BUILDING>DEPLOYING',
        'DEPLOYING>DEPLOYED',
      ]);
      const first = (await h.pendingEvents(created.body.id))[0]!;
      expect(first).toMatchObject({
        status: 'BUILDING',
        previousStatus: null,
        deploymentId: created.body.id,
      });
    } finally {
      await worker.stop();
    }
  });
});

describe('a pipeline worker shutting down', () => {
  it('stops its running step and hands the deployment back for another worker to run at once', async () => {
    const workerA = h.newWorker({
      buildCommand: LONG_STEP,
      commandEnv: commandEnv(),
      leaseMs: 60_000,
    });
    workerA.start();
    const service = h.projects.addService();
    const created = await h.api.trigger(service, { commitHash: newCommitHash() });
    const id = created.body.id;
    const pids = await pidsWrittenBy(pidDir, id);
    leftovers.push(...pids);

    await workerA.stop();

    for (const pid of pids) expect(await isProcessRunning(pid)).toBe(false);
    expect((await h.api.get(service, id)).body.status).toBe('BUILDING');
    expect(await h.leases(id)).toEqual([{ attempt: 1, owner: workerA.workerId, released: true }]);
    expect(await h.isQueued(id)).toBe(true);
    expect(await h.logs(id)).toContain(
      'The pipeline worker is shutting down: the build step will run again.',
    );

    // The 60 s lease is not waited for: the deployment was given back.
    const workerB = h.newWorker({ buildCommand: 'echo "built by B"' });
    workerB.start();
    try {
      const deployed = await h.waitForStatus(service, id, 'DEPLOYED', 10_000);
      expect(deployed.logs).toContain('built by B');
      expect(deployed.logs).not.toContain('--- Attempt');
      await h.released(id);
      expect(await h.leases(id)).toEqual([
        { attempt: 1, owner: workerA.workerId, released: true },
        { attempt: 2, owner: workerB.workerId, released: true },
      ]);
    } finally {
      await workerB.stop();
    }
  });
});
