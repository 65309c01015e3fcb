import { Router } from 'express';
import { accountIdOf } from '@platform/shared';
import type { ProjectsService } from '../projects/projects.service';
import { toOwnedProject } from '../projects/projects.schemas';
import type { ServicesService } from '../services/services.service';
import { toOwnedService } from '../services/services.schemas';

/**
 * Ownership checks for deployments and webhooks (`requireOwnership` in libs/shared reads the
 * answer as its OwnedResource), for the account of the identity header. Never routed by the
 * gateway.
 */
export function internalRouter(projects: ProjectsService, services: ServicesService): Router {
  const router = Router();

  router.get('/internal/projects/:projectId', async (req, res) => {
    const project = await projects.getProject(accountIdOf(req), req.params.projectId);
    res.json(toOwnedProject(project));
  });

  router.get('/internal/projects/:projectId/services/:serviceId', async (req, res) => {
    const { projectId, serviceId } = req.params;
    const service = await services.getService(accountIdOf(req), projectId, serviceId);
    res.json(toOwnedService(service));
  });

  return router;
}
