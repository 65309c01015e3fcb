import type { Connection } from 'mongoose';
import {
  deploymentLogsModel,
  deploymentModel,
  logChunkModel,
} from './deployments/deployments.model';
import { idempotencyKeyModel } from './deployments/idempotency.model';
import { accountGateModel } from './pipeline/account-gate.model';
import { sourceSnapshotModel } from './source/snapshot';

/** The service's models on one connection (each test file has a database of its own). */
export const createModels = (connection: Connection) => ({
  deployments: deploymentModel(connection),
  logs: deploymentLogsModel(connection),
  logChunks: logChunkModel(connection),
  idempotencyKeys: idempotencyKeyModel(connection),
  sources: sourceSnapshotModel(connection),
  accountGates: accountGateModel(connection),
});

export type Models = ReturnType<typeof createModels>;
