import { Types } from 'mongoose';
import { monitoredModels } from '../test/commands';
import { newCommitHash, useHarness } from '../test/harness';
import { buildService } from '../test/projects-stub';
import type { DeploymentDoc } from '../deployments/deployments.model';
import { Claiming } from './claiming';

const h = useHarness();
const LIMITS = { maxBuilds: 100, maxApps: 100 };

/**
 * `services` more services of the account, each with an older deployment DEPLOYING (held by another
 * worker) and a newer one still to build, which waits for it (one deployment of a service runs
 * at a time): none can be claimed.
 */
async function waitingBehindDeploys(accountId: string, services: number): Promise<void> {
  const { projectId } = buildService({ accountId });
  const now = Date.now();
  const docs: Partial<DeploymentDoc>[] = [];
  for (let i = 0; i < services; i++) {
    const serviceId = new Types.ObjectId().toHexString();
    /** A deployment of this service, created and last changed so many milliseconds ago. */
    const deployment = (
      status: DeploymentDoc['status'],
      createdAgo: number,
      changedAgo: number,
    ): Partial<DeploymentDoc> => ({
      accountId,
      projectId,
      serviceId,
      commitMessage: '',
      outbox: [],
      _id: new Types.ObjectId(),
      commitHash: newCommitHash(),
      status,
      createdAt: new Date(now - createdAgo),
      statusChangedAt: new Date(now - changedAgo),
    });
    docs.push(
      {
        ...deployment('DEPLOYING', 60_000, 30_000),
        leaseOwner: 'another worker',
        leaseUntil: new Date(now + 600_000),
        attempts: 1,
      },
      deployment('BUILDING', 1_000, 1_000),
    );
  }
  await h.models.deployments.insertMany(docs);
}

describe('claiming the next deployment', () => {
  it('asks the database as many times whatever the number of deployments waiting', async () => {
    const { accountId } = buildService();
    const monitored = await monitoredModels(h.config.MONGO_URL, h.config.MONGO_DB);
    const pipeline = new Claiming(monitored.models, 65_536, LIMITS);
    const commandsToFindNothing = async () => {
      monitored.reset();
      expect(await pipeline.claimNext('a worker', 60_000)).toBeNull();
      // Sorted: commands sent together may start in either order.
      return monitored.sent.map((c) => `${c.name} ${c.collection ?? ''}`).sort();
    };
    try {
      await waitingBehindDeploys(accountId, 2);
      const few = await commandsToFindNothing();
      await waitingBehindDeploys(accountId, 8);
      const more = await commandsToFindNothing();
      await waitingBehindDeploys(accountId, 20);
      const many = await commandsToFindNothing();

      expect(more).toEqual(few);
      expect(many).toEqual(few);
    } finally {
      await monitored.close();
    }
  });
});
