import type { Express } from 'express';
import type { Connection } from 'mongoose';
import { createMetrics, createServiceApp, pingMongo, type Logger } from '@platform/shared';
import { internalRouter } from './internal/internal.routes';
import { projectsRouter } from './projects/projects.routes';
import type { ProjectsService } from './projects/projects.service';
import { servicesRouter } from './services/services.routes';
import type { ServicesService } from './services/services.service';

export interface AppDeps {
  logger: Logger;
  internalSecret: string;
  /** Readiness pings it. */
  connection: Connection;
  projects: ProjectsService;
  services: ServicesService;
}

/** The projects service's HTTP app, as compose.ts builds it; runService (or a test) listens. */
export function createApp(deps: AppDeps): Express {
  return createServiceApp({
    logger: deps.logger,
    metrics: createMetrics('projects'),
    readiness: { mongo: () => pingMongo(deps.connection) },
    internalSecret: deps.internalSecret,
    routes: (app) => {
      app.use(projectsRouter(deps.projects));
      app.use(servicesRouter(deps.services));
      app.use(internalRouter(deps.projects, deps.services));
    },
  });
}
