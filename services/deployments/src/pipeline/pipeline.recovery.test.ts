import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { connectMongo, writeWithoutRelay } from '@platform/shared';
import { testInfraUrls, testLogger, waitFor } from '@platform/shared/testing';
import { NO_LEASE, deploymentModels, type DeploymentDoc } from '../deployments/deployments.model';
import { startHarness, newCommitHash, testPipelineOptions, type Harness } from '../test/harness';
import { isProcessRunning, killQuietly, LONG_STEP, pidsWrittenBy } from '../test/processes';
import { PipelineRepository } from './pipeline.repository';
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

const statusChanges = (id: string) => h.changes(id);

/**
 * What a worker that claimed the deployment and died mid-step leaves behind: its claim counted
 * (`attempts`), the lease in its name running out at `leaseUntil`, its logs document.
 */
async function claimedByVanishedWorker(deploymentId: string, owner: string, leaseUntil: Date) {
  const doc = await h.models.deployments
    .findOneAndUpdate(
      { _id: deploymentId },
      { $set: { leaseOwner: owner, leaseUntil }, $inc: { attempts: 1 } },
      { new: true },
    )
    .lean<DeploymentDoc>();
  await h.models.logs.updateOne(
    { _id: deploymentId },
    {
      $setOnInsert: {
        accountId: doc!.accountId,
        projectId: doc!.projectId,
        serviceId: doc!.serviceId,
        logs: '',
      },
      $set: { attempt: doc!.attempts },
    },
    { upsert: true },
  );
  return { owner, attempt: doc!.attempts };
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
      expect(await h.lease(id)).toEqual({
        attempts: 1,
        handedBack: 0,
        leaseOwner: workerA.workerId,
      });

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
      // Two claims, the first lost with its worker (never handed back).
      expect(await h.released(id)).toEqual({ attempts: 2, handedBack: 0, leaseOwner: null });
      expect(await statusChanges(id)).toEqual([
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
    const lease = await claimedByVanishedWorker(
      id,
      'a-worker-that-was-killed',
      new Date(Date.now() + 500),
    );
    const repository = h.repository;
    const building = await repository.find(service, id);
    expect(await repository.changeStatus(building!, 'DEPLOYING', lease)).not.toBeNull();
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
      expect(deployed.logs).toContain(
        '--- Attempt 2: the pipeline worker running this deployment stopped responding. ---',
      );
      expect(deployed.logs).toMatch(/^==> build step started\nbuilt\n/);
      expect(await h.released(id)).toEqual({ attempts: 2, handedBack: 0, leaseOwner: null });
      expect(await statusChanges(id)).toEqual([
        '->BUILDING',
        'BUILDING>DEPLOYING',
        'DEPLOYING>DEPLOYED',
      ]);
    } finally {
      await worker.stop();
    }
  });

  it('takes over a deployment whose worker vanished mid-build and says which attempt it is', async () => {
    const service = h.projects.addService();
    const created = await h.api.trigger(service, { commitHash: newCommitHash() });
    const id = created.body.id;
    await claimedByVanishedWorker(id, 'vanished-worker', new Date(Date.now() - 1));
    const worker = h.newWorker({ buildCommand: 'echo "rebuilt $DEPLOYMENT_ID"' });
    worker.start();
    try {
      const deployed = await h.waitForStatus(service, id, 'DEPLOYED');

      expect(deployed.logs).toMatch(
        /^--- Attempt 2: the pipeline worker running this deployment stopped responding\. ---\n==> build step started\n/,
      );
      expect(deployed.logs).toContain(`rebuilt ${id}`);
      expect(await h.released(id)).toEqual({ attempts: 2, handedBack: 0, leaseOwner: null });
      expect(await statusChanges(id)).toEqual([
        '->BUILDING',
        'BUILDING>DEPLOYING',
        'DEPLOYING>DEPLOYED',
      ]);
    } finally {
      await worker.stop();
    }
  });

  it('fails a deployment whose workers vanished on every one of its attempts', async () => {
    const service = h.projects.addService();
    const created = await h.api.trigger(service, { commitHash: newCommitHash() });
    const id = created.body.id;
    for (const n of [1, 2, 3]) {
      await claimedByVanishedWorker(id, `vanished-worker-${n}`, new Date(Date.now() - 1));
    }
    const worker = h.newWorker({ buildCommand: 'echo build-ran', maxAttempts: 3 });
    worker.start();
    try {
      const failed = await h.waitForStatus(service, id, 'FAILED');

      expect(failed.logs).toContain('--- Attempt 4');
      expect(failed.logs).toContain('Gave up after 3 attempts.');
      expect(failed.logs).not.toContain('build-ran');
      expect(await statusChanges(id)).toEqual(['->BUILDING', 'BUILDING>FAILED']);
      expect(await h.released(id)).toEqual({ attempts: 4, handedBack: 0, leaseOwner: null });
    } finally {
      await worker.stop();
    }
  });

  it('counts a claim handed back on shutdown as no lost attempt', async () => {
    const service = h.projects.addService();
    const created = await h.api.trigger(service, { commitHash: newCommitHash() });
    const id = created.body.id;
    // Two vanished workers, then one that shut down in good order: two attempts lost of three.
    for (const n of [1, 2]) {
      await claimedByVanishedWorker(id, `vanished-worker-${n}`, new Date(Date.now() - 1));
    }
    await h.models.deployments.updateOne(
      { _id: id },
      { $set: { leaseOwner: null, leaseUntil: NO_LEASE }, $inc: { attempts: 1, handedBack: 1 } },
    );
    const worker = h.newWorker({ buildCommand: 'echo build-ran', maxAttempts: 3 });
    worker.start();
    try {
      const deployed = await h.waitForStatus(service, id, 'DEPLOYED');

      expect(deployed.logs).toContain('--- Attempt 3');
      expect(deployed.logs).toContain('build-ran');
      expect(await h.released(id)).toEqual({ attempts: 4, handedBack: 1, leaseOwner: null });
    } finally {
      await worker.stop();
    }
  });
});

describe('a pipeline worker that comes back after another took its deployment over', () => {
  it('writes nothing over the output of the worker that holds the deployment now', async () => {
    // A freezes (no heartbeat for 10 s) mid-build; meanwhile B takes the deployment over.
    const workerA = h.newWorker({
      buildCommand:
        'echo "A was here"; while [ ! -e "$PID_DIR/$DEPLOYMENT_ID.go" ]; do sleep 0.05; done',
      commandEnv: commandEnv(),
      heartbeatMs: 10_000,
      leaseMs: 60_000,
    });
    workerA.start();
    try {
      const service = h.projects.addService();
      const created = await h.api.trigger(service, { commitHash: newCommitHash() });
      const id = created.body.id;
      await waitFor(async () => (await h.lease(id)).leaseOwner === workerA.workerId, {
        what: 'A to claim it',
      });
      const takenOver = await h.models.deployments
        .findOneAndUpdate(
          { _id: id },
          {
            $set: { leaseOwner: 'worker-b', leaseUntil: new Date(Date.now() + 60_000) },
            $inc: { attempts: 1 },
          },
          { new: true },
        )
        .lean<DeploymentDoc>();
      const leaseB = {
        deploymentId: id,
        owner: 'worker-b',
        attempt: takenOver!.attempts,
        leaseUntil: takenOver!.leaseUntil,
        lostAttempts: 1,
      };
      expect(await new PipelineRepository(h.models).writeLogs(leaseB, 'B rebuilt it\n')).toBe(true);

      // A's build ends and A is stopped: whichever it notices first, its run ends (stop() waits
      // for that) without a write.
      await writeFile(path.join(pidDir, `${id}.go`), '');
      await workerA.stop();

      expect(await h.logs(id)).toBe('B rebuilt it\n');
      expect(await h.lease(id)).toEqual({ attempts: 2, handedBack: 0, leaseOwner: 'worker-b' });
      expect(await statusChanges(id)).toEqual(['->BUILDING']);
    } finally {
      await workerA.stop();
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
    expect(await h.lease(id)).toEqual({ attempts: 1, handedBack: 1, leaseOwner: null });
    expect(await h.isClaimable(id)).toBe(true);
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
      expect(await h.released(id)).toEqual({ attempts: 2, handedBack: 1, leaseOwner: null });
    } finally {
      await workerB.stop();
    }
  });
});
