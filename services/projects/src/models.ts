import type { Connection } from 'mongoose';
import { projectModel } from './projects/projects.model';
import { serviceModel } from './services/services.model';
import { variableModel } from './variables/variables.model';

/** Every model of the service on `connection`; compose syncs their indexes at start-up. */
export const createModels = (connection: Connection) => ({
  projects: projectModel(connection),
  services: serviceModel(connection),
  variables: variableModel(connection),
});

export type Models = ReturnType<typeof createModels>;
