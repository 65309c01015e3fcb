import type { Connection } from 'mongoose';
import { projectModel } from './projects/projects.model';
import { serviceModel } from './services/services.model';

/** Every model of the service on `connection`; compose syncs their indexes at start-up. */
export const createModels = (connection: Connection) => ({
  projects: projectModel(connection),
  services: serviceModel(connection),
});

export type Models = ReturnType<typeof createModels>;
