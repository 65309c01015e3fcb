import type { Connection } from 'mongoose';
import { createProjectModel, type ProjectModel } from './projects/projects.model';
import { createServiceModel, type ServiceModel } from './services/services.model';

export interface Models {
  projects: ProjectModel;
  services: ServiceModel;
}

export const createModels = (connection: Connection): Models => ({
  projects: createProjectModel(connection),
  services: createServiceModel(connection),
});
