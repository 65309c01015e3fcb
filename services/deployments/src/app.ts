import type { Express } from 'express';
import type { Connection } from 'mongoose';
import {
  createMetrics,
  createServiceApp,
  pingMongo,
  type InternalClient,
  type Logger,
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
  /** Wakes the outbox relay after a write that queued an event. */
  onEventQueued: () => void;
  /** Wakes a local pipeline worker (if this process runs one) after a trigger. */
  onDeploymentCreated?: () => void;
}

export function createDeploymentsService(deps: AppDeps): DeploymentsService {
  const models = deploymentModels(deps.connection);
  return new DeploymentsService({
    deployments: new DeploymentsRepository(models),
    idempotencyKeys: new IdempotencyRepository(models.idempotencyKeys),
    assertServiceOwned: serviceOwnership(deps.projects),
    onEventQueued: deps.onEventQueued,
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
