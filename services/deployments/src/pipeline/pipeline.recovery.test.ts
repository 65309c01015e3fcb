import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { connectMongo } from '@platform/shared';
import { testLogger, waitFor } from '@platform/shared/testing';
import { NO_LEASE, type DeploymentDoc } from '../deployments/deployments.model';
import { createModels } from '../models';
import { useHarness } from '../test/harness';
import { isProcessRunning, useFixtureSteps } from '../test/processes';
import { Leases } from './leases';

// No pipeline in the harness: the tests run the workers of other replicas (h.newWorker).
const steps = useFixtureSteps();
const h = useHarness();

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
  await h.repository.logs.create({ ...doc!, deploymentId });
  await h.models.logs.updateOne({ _id: deploymentId }, { $set: { attempt: doc!.attempts } });
  return { owner, attempt: doc!.attempts };
}

/** Lost with `count` workers in a row, each vanished without a word, their leases run out. */
async function abandonedBy(count: number, deploymentId: string) {
  for (let n = 1; n <= count; n++) {
    await claimedByVanishedWorker(deploymentId, `vanished-worker-${n}`, new Date(Date.now() - 1));
  }
}

/** The lease of a deployment nobody holds any more, after `attempts` claims. */
const releasedAfter = (attempts: number, handedBack: number) => ({
  attempts,
  handedBack,
  leaseOwner: null,
});

/** What a worker that shut down in good order leaves: its claim counted, and handed back. */
async function handedBackOnce(deploymentId: string) {
  await h.models.deployments.updateOne(
    { _id: deploymentId },
    { $set: { leaseOwner: null, leaseUntil: NO_LEASE }, $inc: { attempts: 1, handedBack: 1 } },
  );
}

const BUILD_RAN = { TEST_BUILD: 'echo build-ran' };

/** Deployed on its second claim, the first one lost with its worker (never handed back). */
async function expectDeployedByTheSecondClaim(id: string) {
  expect(await h.released(id)).toEqual(releasedAfter(2, 0));
  expect(await h.changes(id)).toEqual(['->BUILDING', 'BUILDING>DEPLOYING', 'DEPLOYING>DEPLOYED']);
}

const SECOND_ATTEMPT =
  '--- Attempt 2: the pipeline worker running this deployment stopped responding. ---';

describe('a pipeline worker that stops without finishing', () => {
  it('loses its lease, and another worker runs the build again from the start to DEPLOYED', async () => {
    // Worker A has its own connection, like a process of its own; closing it cuts A off from the
    // database mid-build, so it can neither renew its lease nor finish: a dead worker to the others.
    const connectionA = await connectMongo({
      url: h.config.MONGO_URL,
      dbName: h.config.MONGO_DB,
      logger: testLogger(),
    });
    const workerA = await h.newWorker({ TEST_BUILD: steps.longStep }, createModels(connectionA));
    const workerB = await h.newWorker({ TEST_BUILD: 'echo "rebuilt $DEPLOYMENT_ID"' });
    workerA.start();
    try {
      const { service, id } = await h.newDeployment();
      const pids = await steps.pidsOf(id);
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
      expect(deployed.logs).toContain(SECOND_ATTEMPT);
      expect(deployed.logs).toContain(`rebuilt ${id}`);
      expect(deployed.logs.indexOf('long step of')).toBeLessThan(
        deployed.logs.indexOf(`rebuilt ${id}`),
      );
      await expectDeployedByTheSecondClaim(id);
      // A, cut off, stopped its own build once its lease had run out.
      for (const pid of pids) expect(await isProcessRunning(pid)).toBe(false);
    } finally {
      await workerB.stop();
      await workerA.stop();
    }
  });

  it('runs again only the deploy step of a deployment abandoned while DEPLOYING', async () => {
    const deployment = await h.newDeployment();
    const { service, id } = deployment;
    // What a worker killed during the deploy step leaves behind: DEPLOYING, its lease running out.
    const lease = await claimedByVanishedWorker(
      id,
      'a-worker-that-was-killed',
      new Date(Date.now() + 500),
    );
    const building = await h.repository.find(service, id);
    expect(await h.repository.changeStatus(building!, 'DEPLOYING', lease)).not.toBeNull();
    await h.repository.logs.append(
      id,
      '==> build step started\nbuilt\n==> build step finished in 0.1 s\n==> deploy step started\n',
      { attempt: lease.attempt },
    );

    const deployed = await h.runWorkerUntil(
      { TEST_BUILD: 'echo build-ran-again', TEST_DEPLOY: 'echo "deployed $COMMIT_HASH"' },
      deployment,
      'DEPLOYED',
    );

    expect(deployed.logs).not.toContain('build-ran-again');
    expect(deployed.logs).toContain(`deployed ${deployment.created.commitHash}`);
    expect(deployed.logs).toContain(SECOND_ATTEMPT);
    expect(deployed.logs).toMatch(/^==> build step started\nbuilt\n/);
    await expectDeployedByTheSecondClaim(id);
  });

  it('takes over a deployment whose worker vanished mid-build and says which attempt it is', async () => {
    const deployment = await h.newDeployment();
    await abandonedBy(1, deployment.id);

    const rebuild = { TEST_BUILD: 'echo "rebuilt $DEPLOYMENT_ID"' };
    const deployed = await h.runWorkerUntil(rebuild, deployment, 'DEPLOYED');

    expect(deployed.logs.startsWith(`${SECOND_ATTEMPT}\n==> build step started\n`)).toBe(true);
    expect(deployed.logs).toContain(`rebuilt ${deployment.id}`);
    await expectDeployedByTheSecondClaim(deployment.id);
  });

  it('fails a deployment whose workers vanished on every one of its attempts', async () => {
    const deployment = await h.newDeployment();
    await abandonedBy(3, deployment.id);

    const failed = await h.runWorkerUntil(BUILD_RAN, deployment, 'FAILED');

    expect(failed.logs).toContain('--- Attempt 4');
    expect(failed.logs).toContain('Gave up after 3 attempts.');
    expect(failed.logs).not.toContain('build-ran');
    expect(await h.changes(deployment.id)).toEqual(['->BUILDING', 'BUILDING>FAILED']);
    expect(await h.released(deployment.id)).toEqual(releasedAfter(4, 0));
  });

  it('counts a claim handed back on shutdown as no lost attempt', async () => {
    const deployment = await h.newDeployment();
    // Two vanished workers, then one that shut down in good order: two attempts lost of three.
    await abandonedBy(2, deployment.id);
    await handedBackOnce(deployment.id);

    const deployed = await h.runWorkerUntil(BUILD_RAN, deployment, 'DEPLOYED');

    expect(deployed.logs).toContain('--- Attempt 3');
    expect(deployed.logs).toContain('build-ran');
    expect(await h.released(deployment.id)).toEqual(releasedAfter(4, 1));
  });
});

describe('a pipeline worker that comes back after another took its deployment over', () => {
  it('writes nothing over the output of the worker that holds the deployment now', async () => {
    // A freezes (no heartbeat for 10 s) mid-build; meanwhile B takes the deployment over. What A
    // printed while it held the deployment is written as it comes; what it prints after, never.
    const workerA = await h.newWorker({
      TEST_BUILD: `echo "A was here"; while [ ! -e '${steps.dir}'/"$DEPLOYMENT_ID.go" ]; do sleep 0.05; done; echo "A after the takeover"`,
      PIPELINE_HEARTBEAT: '10s',
      PIPELINE_LEASE: '60s',
    });
    workerA.start();
    try {
      const { id } = await h.newDeployment();
      // Claimed: held by A, its first output written.
      await waitFor(
        async () =>
          (await h.lease(id)).leaseOwner === workerA.workerId &&
          (await h.logs(id)).includes('A was here\n'),
        { what: 'A to claim it and write its first output' },
      );
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
      expect(
        await new Leases(h.models, h.config.LOG_LIMIT_BYTES).writeLogs(leaseB, 'B rebuilt it\n'),
      ).toBe(true);

      // A's build ends and A is stopped: whichever it notices first, its run ends (stop() waits
      // for that) without a write.
      await writeFile(path.join(steps.dir, `${id}.go`), '');
      await workerA.stop();

      expect(await h.logs(id)).toBe('==> build step started\nA was here\nB rebuilt it\n');
      expect(await h.lease(id)).toEqual({ attempts: 2, handedBack: 0, leaseOwner: 'worker-b' });
      expect(await h.changes(id)).toEqual(['->BUILDING']);
    } finally {
      await workerA.stop();
    }
  });
});

describe('a pipeline worker shutting down', () => {
  it('stops its running step and hands the deployment back for another worker to run at once', async () => {
    const workerA = await h.newWorker({ TEST_BUILD: steps.longStep, PIPELINE_LEASE: '60s' });
    workerA.start();
    const { service, id } = await h.newDeployment();
    const pids = await steps.pidsOf(id);

    await workerA.stop();

    for (const pid of pids) expect(await isProcessRunning(pid)).toBe(false);
    expect((await h.api.get(service, id)).body.status).toBe('BUILDING');
    expect(await h.lease(id)).toEqual(releasedAfter(1, 1));
    expect(await h.isClaimable(id)).toBe(true);
    expect(await h.logs(id)).toContain(
      'The pipeline worker is shutting down: the build step will run again.',
    );

    // The 60 s lease is not waited for: the deployment was given back.
    await h.withWorker({ TEST_BUILD: 'echo "built by B"' }, async () => {
      const deployed = await h.waitForStatus(service, id, 'DEPLOYED', 10_000);
      expect(deployed.logs).toContain('built by B');
      expect(deployed.logs).not.toContain('--- Attempt');
      expect(await h.released(id)).toEqual(releasedAfter(2, 1));
    });
  });
});
