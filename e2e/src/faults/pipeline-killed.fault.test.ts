import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { identityHeaders, requestJson, waitFor } from '@platform/shared/testing';
import { clientWithService } from '../support/fixtures';
import { E2E_INTERNAL_SECRET, requireLocalStack, startKillableService } from '../support/stack';

const PORT = 14103;

describe('the deployments pipeline killed mid-build', () => {
  beforeAll(requireLocalStack);

  it('leaves no deployment BUILDING: a restarted worker takes it over and finishes it', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'pipeline-killed-'));
    // The first run of the build marks itself and hangs; a rerun finds the mark and succeeds.
    const build = `if [ -e ${dir}/started-$DEPLOYMENT_ID ]; then echo rerun; else touch ${dir}/started-$DEPLOYMENT_ID; echo first run; sleep 60; fi`;
    const deployments = await startKillableService('deployments', PORT, {
      BUILD_COMMAND: build,
      DEPLOY_COMMAND: 'echo deployed',
      PIPELINE_LEASE: '2s',
    });
    try {
      const { accountId, projectId, serviceId } = await clientWithService('Pipeline killed');
      // Signed at each request: a signed identity lives 60 s, less than this test may take.
      const headers = () => identityHeaders(accountId, E2E_INTERNAL_SECRET);
      const base = `${deployments.url}/api/projects/${projectId}/services/${serviceId}/deployments`;
      const trigger = await requestJson(base, {
        method: 'POST',
        headers: headers(),
        body: { commitHash: 'fee1dead' },
      });
      expect(trigger.status).toBe(201);
      const id = trigger.body.id as string;
      await waitFor(() => existsSync(path.join(dir, `started-${id}`)), {
        timeoutMs: 20_000,
        what: 'the build to start',
      });

      await deployments.crash();
      await deployments.restart();

      const done = await waitFor(
        async () => {
          const res = await requestJson(`${base}/${id}`, { headers: headers() });
          return ['DEPLOYED', 'FAILED'].includes(res.body?.status) ? res.body : null;
        },
        { timeoutMs: 45_000, intervalMs: 250, what: 'the deployment to leave BUILDING' },
      );
      expect(done.status).toBe('DEPLOYED');
      expect(done.logs).toContain('rerun');
    } finally {
      await deployments.stop();
    }
  });
});
