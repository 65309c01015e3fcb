import type { Express } from 'express';
import type { Connection } from 'mongoose';
import {
  createMetrics,
  createServiceApp,
  pingMongo,
  type InternalClient,
  type Logger,
  type OutboxWriter,
} from '@platform/shared';
import { deploymentModels } from './deployments/deployments.model';
import { DeploymentsRepository } from './deployments/deployments.repository';
import { DEPLOYMENTS_PATH, deploymentsRouter } from './deployments/deployments.routes';
import { DeploymentsService } from './deployments/deployments.service';
import { IdempotencyRepository } from './deployments/idempotency.repository';
import { serviceOwnership } from './deployments/projects.client';

export interface AppDeps {
  logger: Logger;
  internalSecret: string;
  connection: Connection;
  /** The projects service, asked about ownership before every request. */
  projects: InternalClient;
  /** Told about every status change written (the outbox relay). */
  outbox: OutboxWriter;
  /** Wakes a local pipeline worker (if this process runs one) after a trigger. */
  onDeploymentCreated?: () => void;
}

export function createDeploymentsService(deps: AppDeps): DeploymentsService {
  const models = deploymentModels(deps.connection);
  return new DeploymentsService({
    deployments: new DeploymentsRepository(models, deps.outbox),
    idempotencyKeys: new IdempotencyRepository(models.idempotencyKeys),
    assertServiceOwned: serviceOwnership(deps.projects),
    onDeploymentCreated: deps.onDeploymentCreated ?? (() => undefined),
  });
}

export function createApp(deps: AppDeps, service = createDeploymentsService(deps)): Express {
  return createServiceApp({
    logger: deps.logger,
    metrics: createMetrics('deployments'),
    readiness: { mongo: () => pingMongo(deps.connection) },
    internalSecret: deps.internalSecret,
    routes: (app) => app.use(DEPLOYMENTS_PATH, deploymentsRouter(service)),
  });
}
