/**
 * Seeding large data sets straight into the deployments service's database (bench_deployments),
 * because creating 100,000 deployments through the API would take hours (each one runs the
 * pipeline). Everything measured afterwards goes through HTTP.
 *
 * The documents are inserted through the service's own Mongoose models (createModels), so
 * they have exactly its shape: the model types check them at compile time and its schemas at
 * insert time, and a change of the model breaks this seeding loudly instead of leaving it
 * behind. A seeded deployment is what a successful pipeline run leaves
 * (services/deployments/src/deployments/deployments.repository.ts and
 * src/pipeline/claiming.ts as of this writing):
 * - the deployment document, DEPLOYED (insertBuilding, then changeStatus to DEPLOYING and
 *   DEPLOYED under the lease of its one attempt), its events already relayed (outbox empty,
 *   `outboxPending: false`), the lease released with the final change (`leaseOwner: null`,
 *   `leaseUntil` the epoch), `attempts: 1`, `handedBack: 0`;
 * - its logs document (same id as a string; made by the worker's claim, written as it ran).
 */
import { randomBytes } from 'node:crypto';
import {
  NO_LEASE,
  type DeploymentDoc,
  type DeploymentLogsDoc,
  type LogChunkDoc,
} from '@platform/deployments/dist/deployments/deployments.model';
import { createModels } from '@platform/deployments/dist/models';
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
}

/** Documents per seeded deployment: the deployment and its logs. */
export const DOCUMENTS_PER_DEPLOYMENT = 3;

/**
 * Inserts `count` DEPLOYED deployments spread evenly over the services, `intervalMs` apart going
 * back from now, oldest first, `batch` at a time (one insertMany per collection and batch).
 * Returns them newest first; anything triggered afterwards is newer than all of them.
 */
export async function seedDeployments(
  connection: Connection,
  target: SeedTarget,
  count: number,
  options: { intervalMs?: number; batch?: number } = {},
): Promise<SeededDeployment[]> {
  const intervalMs = options.intervalMs ?? 60_000;
  const batch = options.batch ?? 1_000;
  const models = createModels(connection);
  const now = Date.now();
  const seeded: SeededDeployment[] = [];
  const startedAt = Date.now();
  for (let from = 0; from < count; from += batch) {
    const deployments: DeploymentDoc[] = [];
    const logs: DeploymentLogsDoc[] = [];
    const chunks: LogChunkDoc[] = [];
    for (let j = from; j < Math.min(count, from + batch); j++) {
      // Oldest first, as they would have been written: the newest rows end the tables (as in a
      // database that grew by use).
      const i = count - 1 - j;
      const serviceId = target.serviceIds[i % target.serviceIds.length]!;
      const createdAt = new Date(now - i * intervalMs);
      const deployedAt = new Date(createdAt.getTime() + 4_000);
      const _id = objectIdAt(createdAt);
      const id = _id.toHexString();
      const commitHash = randomBytes(20).toString('hex');
      const ref = { accountId: target.accountId, projectId: target.projectId, serviceId };
      deployments.push({
        _id,
        ...ref,
        commitHash,
        commitMessage: `Seeded commit ${i}`,
        status: 'DEPLOYED',
        createdAt,
        statusChangedAt: deployedAt,
        deployedAt,
        leaseOwner: null,
        leaseUntil: NO_LEASE,
        attempts: 1,
        handedBack: 0,
        claimedAt: createdAt,
        cancelReason: null,
        outbox: [],
        outboxPending: false,
      });
      const text = logsOf(commitHash, serviceId, id);
      const lines = text.split('\n').length - 1;
      const bytes = Buffer.byteLength(text);
      logs.push({
        _id: id,
        ...ref,
        attempt: 1,
        release: null,
        firstSeq: 0,
        droppedBytes: 0,
        trimmed: false,
      });
      chunks.push({
        _id: new Types.ObjectId(),
        deploymentId: id,
        ...ref,
        seq: 0,
        firstLine: 1,
        lastLine: lines,
        text,
        bytes,
        totalBytes: bytes,
      });
      seeded.push({ id, serviceId, createdAt });
    }
    // In the pipeline's order: the deployment exists before its logs document is made.
    await models.deployments.insertMany(deployments, { ordered: false });
    await models.logs.insertMany(logs, { ordered: false });
    await models.logChunks.insertMany(chunks, { ordered: false });
    const done = Math.min(count, from + batch);
    if (done % (batch * 10) === 0 || done === count) {
      const rate = Math.round(done / ((Date.now() - startedAt) / 1000));
      say(
        `seeded ${done}/${count} deployments (${done * DOCUMENTS_PER_DEPLOYMENT} documents, ` +
          `${rate} deployments/s)`,
      );
    }
  }
  return seeded.reverse();
}
