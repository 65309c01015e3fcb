import { Router } from 'express';
import { accountIdOf } from '@platform/shared';
import type { ProjectsService } from '../projects/projects.service';
import { toOwnedProject } from '../projects/projects.schemas';
import type { ServicesService } from '../services/services.service';
import { settingsOf, toOwnedService } from '../services/services.schemas';
import { toSourceVariable } from '../variables/variables.schemas';
import type { VariablesService } from '../variables/variables.service';

/**
 * What other services ask, for the account of the identity header; never routed by the gateway.
 * The ownership checks of deployments and webhooks (`requireOwnership` in libs/shared reads the
 * answer as its OwnedResource), and the source snapshot a deployment keeps at its trigger.
 */
export function internalRouter(deps: {
  projects: ProjectsService;
  services: ServicesService;
  variables: VariablesService;
}): Router {
  const { projects, services, variables } = deps;
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

  // Secret variables stay sealed: only the pipeline opens them, just before a sandboxed process.
  // Only the caller's service answers (404 otherwise): the deployment trigger's ownership check.
  router.get('/internal/projects/:projectId/services/:serviceId/source', async (req, res) => {
    const { projectId, serviceId } = req.params;
    const { service, id } = await services.requireService(accountIdOf(req), projectId, serviceId);
    const list = await variables.variablesOf(id);
    res.json({
      ...toOwnedService(service),
      ...settingsOf(service),
      variables: list.map(toSourceVariable),
    });
  });

  return router;
}
