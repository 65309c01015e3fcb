import {
  createAppRepository,
  FIXTURE_APP,
  requestJson,
  startTestServer,
  waitFor,
} from '@platform/shared/testing';
import { clientWithService } from '../support/fixtures';
import { ownRuntime, requireLocalStack, stackSecret, startKillableService } from '../support/stack';

const PORT = 14103;
const ROUTER_PORT = 14123;

describe('the deployments pipeline killed mid-build', () => {
  beforeAll(requireLocalStack);

  it('leaves no deployment BUILDING: a restarted worker takes it over and finishes it', async () => {
    // The build asks this server which run it is (the sandbox sees no file of the host): the
    // first run hangs, a rerun goes on to build.
    let runs = 0;
    const gate = await startTestServer((_req, res) => {
      runs += 1;
      res.end(runs === 1 ? 'first run' : 'rerun');
    });
    const repository = await createAppRepository();
    const commit = await repository.commit();
    const ask = `fetch('${gate.url}/run').then((r) => r.text()).then((t) => { console.log(t); if (t === 'first run') setTimeout(() => {}, 60000); })`;
    const runtime = ownRuntime(ROUTER_PORT);
    const deployments = await startKillableService('deployments', PORT, {
      ...runtime.env,
      PIPELINE_LEASE: '2s',
    });
    try {
      const { accountId, projectId, serviceId } = await clientWithService('Pipeline killed', {
        repository: repository.url,
        ...FIXTURE_APP,
        buildCommand: `node -e "${ask}" && ${FIXTURE_APP.buildCommand}`,
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
      await waitFor(() => runs === 1, { timeoutMs: 20_000, what: 'the build to start' });

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
      expect(done.logs).toContain('rerun');
    } finally {
      await deployments.stop();
      await runtime.stop();
      await gate.close();
      await repository.close();
    }
  });
});
