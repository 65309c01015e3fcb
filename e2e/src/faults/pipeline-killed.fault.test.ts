import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { signIdentity } from '@platform/shared';
import { requestJson, uniqueName, waitFor } from '@platform/shared/testing';
import { clientWithService } from '../support/fixtures';
import {
  E2E_INTERNAL_SECRET,
  requireLocalStack,
  startServiceProcess,
  type ServiceProcess,
} from '../support/stack';

const PORT = 14103;

describe('the deployments pipeline killed mid-build', () => {
  beforeAll(requireLocalStack);

  it('leaves no deployment BUILDING: a restarted worker takes it over and finishes it', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'pipeline-killed-'));
    // The first run of the build marks itself and hangs; a rerun finds the mark and succeeds.
    const build = `if [ -e ${dir}/started-$DEPLOYMENT_ID ]; then echo rerun; else touch ${dir}/started-$DEPLOYMENT_ID; echo first run; sleep 60; fi`;
    const env = {
      MONGO_DB: uniqueName('fault_deployments'),
      // One group across the kill and the restart, as a real restart keeps it.
      KAFKA_GROUP_ID: uniqueName('fault-deployments'),
      BUILD_COMMAND: build,
      DEPLOY_COMMAND: 'echo deployed',
      PIPELINE_LEASE_SECONDS: '2',
    };
    let deployments: ServiceProcess | undefined = await startServiceProcess(
      'deployments',
      PORT,
      env,
    );
    try {
      const { accountId, projectId, serviceId } = await clientWithService('Pipeline killed');
      const headers = () => ({
        'x-platform-identity': signIdentity(accountId, E2E_INTERNAL_SECRET),
      });
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

      await deployments.kill('SIGKILL');
      deployments = await startServiceProcess('deployments', PORT, env);

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
      await deployments?.kill('SIGTERM');
    }
  });
});
