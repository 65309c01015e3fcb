import { z } from 'zod';
import { nameSchema } from '../names/name.schema';
import type { Service } from './services.repository';

export const createServiceBody = z.object({ name: nameSchema }).strict();
export type CreateServiceBody = z.infer<typeof createServiceBody>;

export const updateServiceBody = z.object({ name: nameSchema }).strict();
export type UpdateServiceBody = z.infer<typeof updateServiceBody>;

/** The Service of contracts.md, Extensions: exactly these fields. */
export const toServiceResponse = (service: Service) => ({
  id: service.id,
  projectId: service.projectId,
  name: service.name,
  createdAt: service.createdAt.toISOString(),
});

/** The internal endpoint's answer, for deployments (docs/architecture.md). */
export const toInternalService = (service: Service) => ({
  projectId: service.projectId,
  serviceId: service.id,
  accountId: service.accountId,
});
