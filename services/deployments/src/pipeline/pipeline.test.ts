import { waitFor } from '@platform/shared/testing';
import { NO_LEASE } from '../deployments/deployments.model';
import { newCommitHash, useHarness } from '../test/harness';
import { buildService, type OwnedService } from '../test/projects-stub';
import { allStopped, isProcessRunning, useFixtureSteps } from '../test/processes';
import { TRIMMED_MARKER } from '../deployments/log-store';

// No pipeline in the harness: each test runs a worker of its own commands (h.withWorker).
const steps = useFixtureSteps();
const h = useHarness();

/** One claim, by a worker that finished it: nothing handed back, nobody holding it. */
const ONE_CLAIM_FINISHED = { attempts: 1, handedBack: 0, leaseOwner: null };

describe('the pipeline', () => {
  it('builds then deploys to DEPLOYED, with both steps’ output and the deployment’s values in the logs', async () => {
    const commands = {
      TEST_BUILD:
        'echo "build of $DEPLOYMENT_ID: service $SERVICE_ID, project $PROJECT_ID, commit $COMMIT_HASH ($COMMIT_MESSAGE)"; sleep 0.3',
      TEST_DEPLOY: 'echo "deploy of $COMMIT_HASH"; echo "a warning" >&2; sleep 0.3',
    };
    await h.withWorker(commands, async () => {
      const { service, id, created } = await h.newDeployment({
        commitMessage: 'Add the pricing page',
      });
      const { commitHash } = created;

      await h.waitForStatus(service, id, 'DEPLOYING');
      const deployed = await h.waitForStatus(service, id, 'DEPLOYED');

      expect(Object.keys(deployed).sort()).toEqual([
        'commitHash',
        'commitMessage',
        'createdAt',
        'deployedAt',
        'id',
        'logs',
        'serviceId',
        'status',
      ]);
      expect(deployed.deployedAt).toMatch(/^\d{4}-\d{2}-\d{2}T.*Z$/);
      expect(Date.parse(deployed.deployedAt)).toBeGreaterThan(Date.parse(deployed.createdAt));
      const logs: string = deployed.logs;
      const buildLine = `build of ${id}: service ${service.serviceId}, project ${service.projectId}, commit ${commitHash} (Add the pricing page)`;
      expect(logs).toContain(buildLine);
      expect(logs).toContain(`deploy of ${commitHash}`);
      expect(logs).toContain('a warning');
      expect(logs.indexOf(buildLine)).toBeLessThan(logs.indexOf(`deploy of ${commitHash}`));
      expect(logs).toMatch(/==> build step finished in [\d.]+ s/);
      expect(logs).toMatch(/==> deploy step finished in [\d.]+ s\n$/);

      const list = await h.api.list(service);
      expect(list.body.deployments).toEqual([
        {
          id,
          serviceId: service.serviceId,
          status: 'DEPLOYED',
          commitHash,
          commitMessage: 'Add the pricing page',
          createdAt: created.createdAt,
          deployedAt: deployed.deployedAt,
        },
      ]);
      expect(await h.released(id)).toEqual(ONE_CLAIM_FINISHED);
      expect(await h.isClaimable(id)).toBe(false);
      const doc = await h.document(id);
      expect(doc!.deployedAt!.toISOString()).toBe(deployed.deployedAt);
      expect(doc!.statusChangedAt).toEqual(doc!.deployedAt);
      expect(doc!.leaseUntil).toEqual(NO_LEASE);
      expect(await h.changes(id)).toEqual([
        '->BUILDING',
        'BUILDING>DEPLOYING',
        'DEPLOYING>DEPLOYED',
      ]);
      const events = await h.pendingEvents(id);
      expect(events[2]!.occurredAt).toBe(deployed.deployedAt);
    });
  });

  it('writes output to the logs while the step is still running', async () => {
    const commands = {
      TEST_BUILD: 'echo first-line; sleep 1.5; echo second-line',
      TEST_DEPLOY: 'true',
    };
    await h.withWorker(commands, async (worker) => {
      const { service, id } = await h.newDeployment();

      const during = await h.waitForLogs(service, id, 'first-line');

      expect(during.status).toBe('BUILDING');
      expect(during.logs).not.toContain('second-line');
      // Held by the worker running it, its first claim.
      expect(await h.lease(id)).toEqual({
        attempts: 1,
        handedBack: 0,
        leaseOwner: worker.workerId,
      });
      expect(await h.isClaimable(id)).toBe(false);
      const done = await h.waitForStatus(service, id, 'DEPLOYED');
      expect(done.logs).toContain('second-line');
    });
  });

  it('fails a deployment whose build exits non-zero, with its output and the exit code in the logs', async () => {
    const deployment = await h.newDeployment();

    const failed = await h.runWorkerUntil(
      {
        TEST_BUILD: 'echo compiling; echo "error: missing semicolon" >&2; exit 3',
        TEST_DEPLOY: 'echo deploy-ran',
      },
      deployment,
      'FAILED',
    );

    expect(failed).not.toHaveProperty('deployedAt');
    expect(failed.logs).toContain('compiling\n');
    expect(failed.logs).toContain('error: missing semicolon\n');
    expect(failed.logs).toContain('The build step failed with exit code 3.');
    expect(failed.logs).not.toContain('deploy-ran');
    expect(await h.changes(deployment.id)).toEqual(['->BUILDING', 'BUILDING>FAILED']);
    expect(await h.released(deployment.id)).toEqual(ONE_CLAIM_FINISHED);
  });

  it('fails a deployment whose deploy step exits non-zero after a good build', async () => {
    const deployment = await h.newDeployment();

    const failed = await h.runWorkerUntil(
      { TEST_BUILD: 'echo built', TEST_DEPLOY: 'echo "no capacity"; exit 7' },
      deployment,
      'FAILED',
    );

    expect(failed.logs).toContain('built\n');
    expect(failed.logs).toContain('no capacity\n');
    expect(failed.logs).toContain('The deploy step failed with exit code 7.');
    expect(await h.changes(deployment.id)).toEqual([
      '->BUILDING',
      'BUILDING>DEPLOYING',
      'DEPLOYING>FAILED',
    ]);
  });

  it('fails a step that passes its time limit and stops its processes', async () => {
    const deployment = await h.newDeployment();

    const failed = await h.runWorkerUntil(
      { TEST_BUILD: steps.longStep, TEST_DEPLOY: 'true', STEP_TIMEOUT: '1s' },
      deployment,
      'FAILED',
    );

    expect(failed.logs).toContain(`long step of ${deployment.id} started`);
    expect(failed.logs).toContain('The build step ran longer than 1.0 s and was stopped.');
    for (const pid of await steps.pidsOf(deployment.id)) {
      expect(await isProcessRunning(pid)).toBe(false);
    }
  });

  it('stops the build when the deployment is cancelled, and a second cancel is 409', async () => {
    const commands = { TEST_BUILD: steps.longStep, TEST_DEPLOY: 'echo deploy-ran' };
    await h.withWorker(commands, async () => {
      const { service, id } = await h.newDeployment();
      const pids = await steps.pidsOf(id);
      expect(pids).toHaveLength(2);
      expect(await isProcessRunning(pids[0]!)).toBe(true);

      const cancelled = await h.api.cancel(service, id);
      expect(cancelled.status).toBe(200);
      expect(cancelled.body.status).toBe('CANCELLED');

      await waitFor(() => allStopped(pids), {
        timeoutMs: 5_000,
        what: 'the build’s processes to stop',
      });
      const final = await h.waitForLogs(
        service,
        id,
        'Deployment cancelled: the build step was stopped.',
      );
      expect(final.status).toBe('CANCELLED');
      // Why, written with the cancel; then the worker that stopped.
      const why = final.logs.indexOf('Deployment cancelled by its owner.\n');
      expect(why).toBeGreaterThanOrEqual(0);
      expect(why).toBeLessThan(final.logs.indexOf('the build step was stopped'));
      expect(final.logs).not.toContain('deploy-ran');
      const again = await h.api.cancel(service, id);
      expect(again.status).toBe(409);
      expect(again.body.error).toBe('CONFLICT');
      expect(await h.changes(id)).toEqual(['->BUILDING', 'BUILDING>CANCELLED']);
      expect(await h.released(id)).toEqual(ONE_CLAIM_FINISHED);
      expect(await h.isClaimable(id)).toBe(false);
    });
  });

  it('stops every one of several builds cancelled at the same moment', async () => {
    await h.withWorker({ TEST_BUILD: steps.longStep, PIPELINE_CONCURRENCY: '4' }, async () => {
      const created = await Promise.all(Array.from({ length: 4 }, () => h.newDeployment()));
      const pids = (await Promise.all(created.map((c) => steps.pidsOf(c.id)))).flat();

      const cancels = await Promise.all(created.map((c) => h.api.cancel(c.service, c.id)));

      expect(cancels.map((c) => c.status)).toEqual([200, 200, 200, 200]);
      await waitFor(() => allStopped(pids), { timeoutMs: 5_000, what: 'every build to stop' });
      for (const c of created) {
        expect(await h.released(c.id)).toEqual(ONE_CLAIM_FINISHED);
        expect(await h.changes(c.id)).toEqual(['->BUILDING', 'BUILDING>CANCELLED']);
      }
    });
  });

  it('stops the deploy step when the deployment is cancelled while DEPLOYING', async () => {
    await h.withWorker({ TEST_BUILD: 'echo built', TEST_DEPLOY: steps.longStep }, async () => {
      const { service, id } = await h.newDeployment();
      const pids = await steps.pidsOf(id);
      await h.waitForStatus(service, id, 'DEPLOYING');

      const cancelled = await h.api.cancel(service, id);

      expect(cancelled.status).toBe(200);
      await waitFor(async () => !(await isProcessRunning(pids[0]!)), {
        timeoutMs: 5_000,
        what: 'the deploy to stop',
      });
      await h.waitForLogs(service, id, 'Deployment cancelled: the deploy step was stopped.');
      expect(await h.changes(id)).toEqual([
        '->BUILDING',
        'BUILDING>DEPLOYING',
        'DEPLOYING>CANCELLED',
      ]);
    });
  });

  it('never runs a deployment that was cancelled before a worker claimed it', async () => {
    const cancelledFirst = await h.newDeployment();
    expect((await h.api.cancel(cancelledFirst.service, cancelledFirst.id)).status).toBe(200);
    expect(await h.isClaimable(cancelledFirst.id)).toBe(false);
    const next = await h.newDeployment();

    // The worker takes the queue oldest first: once the next one is done, it went past.
    await h.runWorkerUntil({ TEST_BUILD: 'echo build-ran' }, next, 'DEPLOYED');

    const res = await h.api.get(cancelledFirst.service, cancelledFirst.id);
    expect(res.body.status).toBe('CANCELLED');
    // Never claimed: no attempt counted, nothing in the log but why it ended.
    expect(res.body.logs).toBe('Deployment cancelled by its owner.\n');
    expect(await h.lease(cancelledFirst.id)).toEqual({
      attempts: 0,
      handedBack: 0,
      leaseOwner: null,
    });
    expect(await h.changes(cancelledFirst.id)).toEqual(['->BUILDING', 'BUILDING>CANCELLED']);
  });

  it('keeps the logs within the limit, trimming the oldest output with a marker', async () => {
    const deployment = await h.newDeployment();

    const deployed = await h.runWorkerUntil(
      {
        TEST_BUILD: 'for i in $(seq 1 3000); do echo "build output line $i"; done',
        TEST_DEPLOY: 'echo deploy-done',
        LOG_LIMIT_BYTES: '4096',
      },
      deployment,
      'DEPLOYED',
    );

    expect(Buffer.byteLength(deployed.logs)).toBeLessThanOrEqual(4096);
    // Trimmed by the log, or dropped before it was written (the output came at once).
    expect(
      deployed.logs.startsWith(TRIMMED_MARKER) || /^\[\.\.\. \d+ lines/.test(deployed.logs),
    ).toBe(true);
    expect(deployed.logs).not.toContain('build output line 1\n');
    expect(deployed.logs).toContain('build output line 3000\n');
    expect(deployed.logs).toContain('deploy-done\n');
  });

  it('runs several deployments side by side, each to DEPLOYED', async () => {
    const commands = {
      PIPELINE_CONCURRENCY: '2',
      TEST_BUILD: 'sleep 0.3; echo "built $COMMIT_HASH"',
    };
    await h.withWorker(commands, async () => {
      const created = await Promise.all(Array.from({ length: 4 }, () => h.newDeployment()));

      for (const c of created) {
        const done = await h.waitForStatus(c.service, c.id, 'DEPLOYED');
        expect(done.logs).toContain(`built ${c.created.commitHash}`);
      }
    });
  });

  it('shares its capacity between accounts: one with a single deployment waits for at most one of another’s many', async () => {
    await h.withWorker({ TEST_BUILD: 'sleep 0.3', PIPELINE_CONCURRENCY: '1' }, async () => {
      const busy = buildService();
      const queued: { service: OwnedService; id: string }[] = [];
      for (let i = 0; i < 4; i++) {
        const service = h.projects.addService(buildService({ accountId: busy.accountId }));
        const res = await h.api.trigger(service, { commitHash: newCommitHash() });
        queued.push({ service, id: res.body.id as string });
      }
      // The busy account's first deployment runs; the rest of its queue waits, older than this.
      await waitFor(async () => (await h.lease(queued[0]!.id)).leaseOwner !== null, {
        what: 'the first deployment to be claimed',
      });
      const lone = h.projects.addService();
      const loneId = (await h.api.trigger(lone, { commitHash: newCommitHash() })).body.id as string;

      for (const q of queued) await h.waitForStatus(q.service, q.id, 'DEPLOYED');
      await h.waitForStatus(lone, loneId, 'DEPLOYED');

      const claimedAt = async (id: string) => (await h.document(id))!.claimedAt!.getTime();
      const loneClaim = await claimedAt(loneId);
      const busyBefore = [];
      for (const q of queued) if ((await claimedAt(q.id)) < loneClaim) busyBefore.push(q.id);
      // In order of arrival the lone one would wait for all four.
      expect(busyBefore).toEqual([queued[0]!.id]);
    });
  });
});
