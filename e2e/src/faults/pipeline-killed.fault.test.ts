import { createAppRepository, FIXTURE_APP, requestJson, waitFor } from '@platform/shared/testing';
import { clientWithService } from '../support/fixtures';
import { ownRuntime, requireLocalStack, stackSecret, startKillableService } from '../support/stack';

const PORT = 14103;
const ROUTER_PORT = 14123;

describe('the deployments pipeline killed mid-build', () => {
  beforeAll(requireLocalStack);

  it('leaves no deployment BUILDING: a restarted worker takes it over and finishes it', async () => {
    // The build takes a few seconds: long enough to be killed in the middle, short for a rerun.
    const repository = await createAppRepository();
    const commit = await repository.commit();
    const runtime = ownRuntime(ROUTER_PORT);
    const deployments = await startKillableService('deployments', PORT, {
      ...runtime.env,
      PIPELINE_LEASE: '2s',
    });
    try {
      const { accountId, projectId, serviceId } = await clientWithService('Pipeline killed', {
        repository: repository.url,
        ...FIXTURE_APP,
        buildCommand: `echo build started; sleep 6; ${FIXTURE_APP.buildCommand}`,
      });
      // requestJson signs each request: an identity is for one request and lives 60 s.
      const identity = {
        accountId,
        audience: 'deployments',
        secret: stackSecret('E2E_INTERNAL_SECRET'),
      } as const;
      const base = `${deployments.url}/api/projects/${projectId}/services/${serviceId}/deployments`;
      const trigger = await requestJson(base, {
        method: 'POST',
        identity,
        body: { commitHash: commit.hash },
      });
      expect(trigger.status).toBe(201);
      const id = trigger.body.id as string;
      await waitFor(
        async () => {
          const res = await requestJson(`${base}/${id}`, { identity });
          return String(res.body?.logs ?? '').includes('\nbuild started\n');
        },
        { timeoutMs: 30_000, intervalMs: 100, what: 'the build to start' },
      );

      await deployments.crash();
      await deployments.restart();

      const done = await waitFor(
        async () => {
          const res = await requestJson(`${base}/${id}`, { identity });
          return ['DEPLOYED', 'FAILED'].includes(res.body?.status) ? res.body : null;
        },
        { timeoutMs: 45_000, intervalMs: 250, what: 'the deployment to leave BUILDING' },
      );
      expect(done.status).toBe('DEPLOYED');
      expect(done.logs).toContain('Attempt 2');
    } finally {
      await deployments.stop();
      await runtime.stop();
      await repository.close();
    }
  });
});
