import { requestJson } from '@platform/shared/testing';
import { useHarness } from '../test/harness';

const h = useHarness();

const internal = (
  id: string,
  accountId: string,
  audience: 'deployments' | 'projects' = 'deployments',
) => requestJson(`${h.url}/internal/deployments/${id}`, { identity: { accountId, audience } });

describe('GET /internal/deployments/:deploymentId', () => {
  it('answers the deployment’s owner, service, commit and status, in any letter case of its id', async () => {
    const { service, id, created } = await h.newDeployment();

    const answers = [
      await internal(id, service.accountId),
      await internal(id.toUpperCase(), service.accountId),
    ];

    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({
        accountId: service.accountId,
        projectId: service.projectId,
        serviceId: service.serviceId,
        deploymentId: id,
        commitHash: created.commitHash,
        status: 'BUILDING',
      });
    }
  });

  it('answers 404 for another account’s, an unknown or a malformed id, and 401 for an identity made for another service', async () => {
    const { service, id } = await h.newDeployment();
    const stranger = h.projects.addService();

    const answers = [
      await internal(id, stranger.accountId),
      await internal('0'.repeat(24), service.accountId),
      await internal('not-an-id', service.accountId),
      await internal(id, service.accountId, 'projects'),
    ];

    expect(answers.map((a) => a.status)).toEqual([404, 404, 404, 401]);
  });
});
