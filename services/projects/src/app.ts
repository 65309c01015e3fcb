import type { Express } from 'express';
import { createServiceApp, type ServiceAppDeps } from '@platform/shared';
import { internalRouter } from './internal/internal.routes';
import { projectsRouter } from './projects/projects.routes';
import type { ProjectsService } from './projects/projects.service';
import { servicesRouter } from './services/services.routes';
import type { ServicesService } from './services/services.service';
import { variablesRouter } from './variables/variables.routes';
import type { VariablesService } from './variables/variables.service';

export interface AppDeps extends ServiceAppDeps {
  projects: ProjectsService;
  services: ServicesService;
  variables: VariablesService;
}

/** The projects service's HTTP app, as compose.ts builds it; runService (or a test) listens. */
export function createApp({ projects, services, variables, ...deps }: AppDeps): Express {
  return createServiceApp({
    name: 'projects',
    ...deps,
    routes: (app) => {
      app.use(projectsRouter(projects));
      app.use(servicesRouter(services));
      app.use(variablesRouter(variables));
      app.use(internalRouter({ projects, services, variables }));
    },
  });
}
