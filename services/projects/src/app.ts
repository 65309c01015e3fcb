import type { Express } from 'express';
import type { Connection } from 'mongoose';
import {
  createMetrics,
  createServiceApp,
  pingMongo,
  type Logger,
  type Metrics,
  type OutboxWriter,
} from '@platform/shared';
import { internalRouter } from './internal/internal.routes';
import type { Models } from './models';
import { createProjectsRepository } from './projects/projects.repository';
import { projectsRouter } from './projects/projects.routes';
import { createProjectsService } from './projects/projects.service';
import { createServicesRepository } from './services/services.repository';
import { servicesRouter } from './services/services.routes';
import { createServicesService } from './services/services.service';

export interface AppDeps {
  logger: Logger;
  internalSecret: string;
  connection: Connection;
  models: Models;
  /** The OutboxRelay, told about every delete's event. */
  outbox: OutboxWriter;
  metrics?: Metrics;
}

/** The projects service's HTTP app; main.ts (or a test) listens. */
export function createApp(deps: AppDeps): Express {
  const projectsRepository = createProjectsRepository(deps.models.projects, deps.outbox);
  const servicesRepository = createServicesRepository(deps.models.services, deps.outbox);
  const projects = createProjectsService({ projects: projectsRepository });
  const services = createServicesService({
    projects: projectsRepository,
    services: servicesRepository,
  });
  return createServiceApp({
    logger: deps.logger,
    metrics: deps.metrics ?? createMetrics('projects'),
    readiness: { mongo: () => pingMongo(deps.connection) },
    internalSecret: deps.internalSecret,
    routes: (app) => {
      app.use(projectsRouter(projects));
      app.use(servicesRouter(services));
      app.use(internalRouter(projects, services));
    },
  });
}
