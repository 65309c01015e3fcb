import { z } from 'zod';
import type { OwnedResource } from '@platform/shared';
import { nameSchema, toNamedResponse } from '../names/named-resources.schemas';
import type { Service } from './services.repository';

/** A service has nothing but its name to set, at creation and rename alike. */
const serviceBody = z.object({ name: nameSchema }).strict();

export const createServiceBody = serviceBody;
export type CreateServiceBody = z.infer<typeof createServiceBody>;

export const updateServiceBody = serviceBody;
export type UpdateServiceBody = z.infer<typeof updateServiceBody>;

/** The Service of contracts.md, Extensions: exactly id, projectId, name and createdAt. */
export const toServiceResponse = (service: Service) => ({
  ...toNamedResponse(service),
  projectId: service.projectId,
});

/** The internal endpoint's answer: what requireOwnership puts on deployments' requests. */
export const toOwnedService = (service: Service): OwnedResource => ({
  accountId: service.accountId,
  projectId: service.projectId,
  serviceId: service.id,
});
