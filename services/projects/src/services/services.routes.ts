import { Router } from 'express';
import { accountIdOf, listQuery, listResponse, validate } from '@platform/shared';
import type { ServicesService } from './services.service';
import {
  createServiceBody,
  nothingToChange,
  toServiceResponse,
  updateServiceBody,
} from './services.schemas';

const SERVICES = '/api/projects/:projectId/services';
const SERVICE = `${SERVICES}/:serviceId`;

export function servicesRouter(services: ServicesService): Router {
  const router = Router();

  router.get(SERVICES, async (req, res) => {
    const query = validate(listQuery, req.query);
    const page = await services.listServices(accountIdOf(req), req.params.projectId, query);
    res.json(listResponse('services', page, toServiceResponse));
  });

  router.post(SERVICES, async (req, res) => {
    const body = validate(createServiceBody, req.body ?? {});
    const service = await services.createService(accountIdOf(req), req.params.projectId, body);
    res.status(201).json(toServiceResponse(service));
  });

  router.get(SERVICE, async (req, res) => {
    const { projectId, serviceId } = req.params;
    const service = await services.getService(accountIdOf(req), projectId, serviceId);
    res.json(toServiceResponse(service));
  });

  router.patch(SERVICE, async (req, res) => {
    const body = validate(updateServiceBody, req.body ?? {});
    const nothing = nothingToChange(body);
    if (nothing) throw nothing;
    const { projectId, serviceId } = req.params;
    const service = await services.updateService(accountIdOf(req), projectId, serviceId, body);
    res.json(toServiceResponse(service));
  });

  router.delete(SERVICE, async (req, res) => {
    const { projectId, serviceId } = req.params;
    await services.deleteService(accountIdOf(req), projectId, serviceId);
    res.status(204).end();
  });

  return router;
}
