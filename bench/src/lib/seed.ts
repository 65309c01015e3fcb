/**
 * Seeding large data sets straight into the deployments service's database (bench_deployments),
 * because creating 100,000 deployments through the API would take hours (each one runs the
 * pipeline). Everything measured afterwards goes through HTTP.
 *
 * The documents are inserted through the service's own Mongoose models (deploymentModels, with
 * its transitionId and leaseId), so they have exactly its shape: the model types check them at
 * compile time and its schemas at insert time, and a change of the model breaks this seeding
 * loudly instead of leaving it behind. A seeded deployment is what a successful pipeline run
 * leaves (services/deployments/src/deployments/deployments.repository.ts and
 * src/pipeline/pipeline.repository.ts as of this writing):
 * - its entry in its service's timeline, `<service>:<seq>`, seq 1, 2, … oldest first, and each
 *   service's head at its last seq (DeploymentTimeline.append, deployments.timeline.ts);
 * - the deployment document (insertBuilding, never updated), with the timelineSeq of its entry,
 *   and its logs document (same _id; written by the worker);
 * - its three transitions (transitionRecord): created → BUILDING, BUILDING → DEPLOYING,
 *   DEPLOYING → DEPLOYED, each with its event already relayed (outbox empty, flag false);
 * - the released lease of its one attempt (PipelineRepository.claim, then release);
 * - no queue entry: a finished deployment has been dequeued.
 */
import { randomBytes } from 'node:crypto';
import {
  deploymentModels,
  leaseId,
  timelineEntryId,
  transitionId,
  type DeploymentDoc,
  type DeploymentLogsDoc,
  type LeaseDoc,
  type TimelineEntryDoc,
  type TimelineHeadDoc,
  type TransitionDoc,
} from '@platform/deployments/dist/deployments/deployments.model';
import { Types, type Connection } from 'mongoose';
import { say } from './log';

/** What the e2e build and deploy commands print: a realistic, small log. */
const logsOf = (commitHash: string, serviceId: string, id: string) =>
  `building ${commitHash} for service ${serviceId}\nbuild done\ndeploying ${id}\ndeploy done\n`;

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
  /** Its place in its service's timeline (what the service's list cursor carries). */
  seq: number;
}

/**
 * Documents per seeded deployment: itself, its timeline entry, three transitions, one lease
 * (and one timeline head per service).
 */
export const DOCUMENTS_PER_DEPLOYMENT = 7;

/**
 * Inserts `count` DEPLOYED deployments spread evenly over the services, `intervalMs` apart going
 * back from now, oldest first. Returns them newest first. The services must have no deployments
 * yet: the seeded ones start their timelines (and are older than anything triggered later).
 */
export async function seedDeployments(
  connection: Connection,
  target: SeedTarget,
  count: number,
  options: { intervalMs?: number; batch?: number } = {},
): Promise<SeededDeployment[]> {
  const intervalMs = options.intervalMs ?? 60_000;
  const batch = options.batch ?? 1_000;
  const models = deploymentModels(connection);
  const now = Date.now();
  for (const serviceId of target.serviceIds) {
    if (await models.timeline.exists({ _id: timelineEntryId(serviceId, 1) })) {
      throw new Error(`service ${serviceId} has deployments already: seeding starts a timeline`);
    }
  }
  const seqs = new Map<string, number>();
  const seeded: SeededDeployment[] = [];
  const startedAt = Date.now();
  for (let from = 0; from < count; from += batch) {
    const deployments: DeploymentDoc[] = [];
    const logs: DeploymentLogsDoc[] = [];
    const timeline: TimelineEntryDoc[] = [];
    const transitions: TransitionDoc[] = [];
    const leases: LeaseDoc[] = [];
    for (let j = from; j < Math.min(count, from + batch); j++) {
      // Oldest first, as they would have been written: the newest rows end the tables, where
      // FerretDB's scans find them last (as in a database that grew by use).
      const i = count - 1 - j;
      const serviceId = target.serviceIds[i % target.serviceIds.length]!;
      const createdAt = new Date(now - i * intervalMs);
      const deploying = new Date(createdAt.getTime() + 2_000);
      const deployed = new Date(createdAt.getTime() + 4_000);
      const _id = objectIdAt(createdAt);
      const id = _id.toHexString();
      const commitHash = randomBytes(20).toString('hex');
      const ref = { accountId: target.accountId, projectId: target.projectId, serviceId };
      const seq = (seqs.get(serviceId) ?? 0) + 1;
      seqs.set(serviceId, seq);
      timeline.push({
        _id: timelineEntryId(serviceId, seq),
        seq,
        deploymentId: id,
        ...ref,
        createdAt,
      });
      deployments.push({
        _id,
        ...ref,
        commitHash,
        commitMessage: `Seeded commit ${i}`,
        createdAt,
        timelineSeq: seq,
      });
      logs.push({
        _id: id,
        projectId: target.projectId,
        serviceId,
        logs: logsOf(commitHash, serviceId, id),
      });
      const change = (
        previous: TransitionDoc['from'],
        to: TransitionDoc['to'],
        at: Date,
        attempt: number | null,
      ): TransitionDoc => ({
        _id: transitionId(id, previous),
        deploymentId: id,
        ...ref,
        from: previous,
        to,
        at,
        attempt,
        outbox: [],
        outboxPending: false,
      });
      transitions.push(
        change(null, 'BUILDING', createdAt, null),
        change('BUILDING', 'DEPLOYING', deploying, 1),
        change('DEPLOYING', 'DEPLOYED', deployed, 1),
      );
      leases.push({
        _id: leaseId(id, 1),
        deploymentId: id,
        projectId: target.projectId,
        serviceId,
        attempt: 1,
        owner: 'bench-seed:0:000000',
        leaseUntil: new Date(0),
        released: true,
      });
      seeded.push({ id, serviceId, createdAt, seq });
    }
    // In the service's order: the entry, then the deployment that points back at it.
    await models.timeline.insertMany(timeline, { ordered: false });
    await models.logs.insertMany(logs, { ordered: false });
    await models.deployments.insertMany(deployments, { ordered: false });
    await models.transitions.insertMany(transitions, { ordered: false });
    await models.leases.insertMany(leases, { ordered: false });
    const done = Math.min(count, from + batch);
    if (done % (batch * 10) === 0 || done === count) {
      const rate = Math.round(done / ((Date.now() - startedAt) / 1000));
      say(
        `seeded ${done}/${count} deployments (${done * DOCUMENTS_PER_DEPLOYMENT} documents, ` +
          `${rate} deployments/s)`,
      );
    }
  }
  const heads: TimelineHeadDoc[] = [...seqs].map(([serviceId, seq]) => ({
    _id: serviceId,
    accountId: target.accountId,
    projectId: target.projectId,
    seq,
  }));
  await models.timelineHeads.insertMany(heads, { ordered: false });
  return seeded.reverse();
}
