/**
 * Seeding large data sets straight into the deployments service's database (bench_deployments),
 * in exactly the shape its models give the documents, because creating 100,000 deployments
 * through the API would take hours (every one runs the pipeline). Everything measured afterwards
 * goes through HTTP.
 *
 * The shapes mirror services/deployments/src/deployments/deployments.model.ts as of this writing:
 * - `deployments`: DeploymentDoc, written by DeploymentsRepository.insertBuilding and then by the
 *   pipeline (PipelineRepository.release leaves logs, the status copy, no lease);
 * - `deployment_transitions`: TransitionDoc, one per status change (transitionRecord), each with
 *   its event already published by the outbox relay (outbox emptied, outboxPending false);
 * - `deployment_leases`: LeaseDoc, the single released attempt a pipeline run leaves behind.
 * A seeded deployment is what a successful run leaves: DEPLOYED, via BUILDING and DEPLOYING.
 */
import { randomBytes } from 'node:crypto';
import { Types, type Connection } from 'mongoose';
import { say } from './log';

/** What the e2e build/deploy commands print: a realistic, small log. */
const LOGS = 'building {hash} for service {service}\nbuild done\ndeploying {id}\ndeploy done\n';

/**
 * An ObjectId whose time part is `at`, as `new Types.ObjectId()` would have made at that moment
 * (the service makes the id and createdAt together), unique through the rest of a fresh id.
 */
export function objectIdAt(at: Date): Types.ObjectId {
  const bytes = Buffer.from(new Types.ObjectId().toHexString(), 'hex');
  bytes.writeUInt32BE(Math.floor(at.getTime() / 1000), 0);
  return new Types.ObjectId(bytes.toString('hex'));
}

export interface SeedTarget {
  accountId: string;
  projectId: string;
  serviceIds: string[];
}

export interface SeededDeployment {
  id: string;
  serviceId: string;
  createdAt: Date;
}

/**
 * Inserts `count` DEPLOYED deployments spread evenly over the services, newest `intervalMs`
 * apart going back from now, with their three transitions and their lease. Calls `progress`
 * after every batch. Returns the deployments, newest first.
 */
export async function seedDeployments(
  connection: Connection,
  target: SeedTarget,
  count: number,
  options: { intervalMs?: number; batch?: number } = {},
): Promise<SeededDeployment[]> {
  const intervalMs = options.intervalMs ?? 60_000;
  const batch = options.batch ?? 1_000;
  const deployments = connection.collection('deployments');
  const transitions = connection.collection('deployment_transitions');
  const leases = connection.collection('deployment_leases');
  const now = Date.now();
  const seeded: SeededDeployment[] = [];
  const startedAt = Date.now();
  for (let from = 0; from < count; from += batch) {
    const deploymentDocs = [];
    const transitionDocs = [];
    const leaseDocs = [];
    for (let i = from; i < Math.min(count, from + batch); i++) {
      const serviceId = target.serviceIds[i % target.serviceIds.length]!;
      const createdAt = new Date(now - i * intervalMs);
      const building = new Date(createdAt.getTime() + 10);
      const deploying = new Date(createdAt.getTime() + 2_000);
      const deployed = new Date(createdAt.getTime() + 4_000);
      const id = objectIdAt(createdAt);
      const hex = id.toHexString();
      const commitHash = randomBytes(20).toString('hex');
      const ref = { accountId: target.accountId, projectId: target.projectId, serviceId };
      // DeploymentDoc after PipelineRepository.release.
      deploymentDocs.push({
        _id: id,
        ...ref,
        commitHash,
        commitMessage: `Seeded commit ${i}`,
        logs: LOGS.replace('{hash}', commitHash)
          .replace('{service}', serviceId)
          .replace('{id}', hex),
        createdAt,
        status: 'DEPLOYED',
        statusChangedAt: deployed,
        deployedAt: deployed,
        leaseOwner: null,
        leaseUntil: new Date(0),
      });
      // TransitionDoc per change (transitionRecord), the outbox already relayed.
      const change = (from: string | null, to: string, at: Date, attempt: number | null) => ({
        _id: objectIdAt(at),
        deploymentId: hex,
        ...ref,
        from,
        to,
        at,
        attempt,
        outbox: [],
        outboxPending: false,
      });
      transitionDocs.push(
        change(null, 'BUILDING', createdAt, null),
        change('BUILDING', 'DEPLOYING', deploying, 1),
        change('DEPLOYING', 'DEPLOYED', deployed, 1),
      );
      // LeaseDoc of the one attempt, released (PipelineRepository.release).
      leaseDocs.push({
        _id: objectIdAt(building),
        deploymentId: hex,
        projectId: target.projectId,
        serviceId,
        attempt: 1,
        owner: 'bench-seed:0:000000',
        leaseUntil: new Date(0),
        released: true,
      });
      seeded.push({ id: hex, serviceId, createdAt });
    }
    await deployments.insertMany(deploymentDocs, { ordered: false });
    await transitions.insertMany(transitionDocs, { ordered: false });
    await leases.insertMany(leaseDocs, { ordered: false });
    const done = Math.min(count, from + batch);
    if (done % (batch * 10) === 0 || done === count) {
      const rate = Math.round(done / ((Date.now() - startedAt) / 1000));
      say(`seeded ${done}/${count} deployments (${done * 5} documents, ${rate} deployments/s)`);
    }
  }
  return seeded;
}
