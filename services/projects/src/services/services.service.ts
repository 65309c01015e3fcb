import {
  conflict,
  newEvent,
  notFound,
  outboxEntry,
  parseCursor,
  parseObjectId,
  toPage,
  TOPICS,
  type ListQuery,
  type ServiceDeletedEvent,
} from '@platform/shared';
import type { Types } from 'mongoose';
import { isUniqueViolation } from '../names/name-conflict';
import type { ProjectsRepository } from '../projects/projects.repository';
import type { Service, ServicesRepository } from './services.repository';
import type { CreateServiceBody, UpdateServiceBody } from './services.schemas';

/** Keeps the unpaged list of a project's services bounded, as the project quota does for projects. */
export const SERVICES_PER_PROJECT = 1_000;

const nameTaken = (name: string) =>
  conflict(`A service named "${name}" already exists in this project.`);

export function createServicesService(deps: {
  projects: ProjectsRepository;
  services: ServicesRepository;
}) {
  const { projects, services } = deps;

  /** Every route here sits under a project: a missing, deleted or foreign one hides its services. */
  async function requireProject(accountId: string, projectId: string): Promise<Types.ObjectId> {
    const id = parseObjectId(projectId, 'Project');
    if (!(await projects.existsLive(accountId, id))) throw notFound('Project');
    return id;
  }

  async function getService(
    accountId: string,
    projectId: string,
    serviceId: string,
  ): Promise<Service> {
    const projectKey = parseObjectId(projectId, 'Project');
    const serviceKey = parseObjectId(serviceId, 'Service');
    // Both lookups are by _id, so they run side by side: this backs the internal endpoint that
    // deployments call on every request.
    const [projectLive, service] = await Promise.all([
      projects.existsLive(accountId, projectKey),
      services.findLive(projectKey, serviceKey),
    ]);
    if (!projectLive) throw notFound('Project');
    if (!service || service.accountId !== accountId) throw notFound('Service');
    return service;
  }

  async function listServices(accountId: string, projectId: string, query: ListQuery) {
    const id = await requireProject(accountId, projectId);
    const after = query.cursor ? parseCursor(query.cursor) : undefined;
    const rows = await services.listLive(id, { limit: query.limit, after });
    return query.limit === undefined ? { items: rows } : toPage(rows, query.limit);
  }

  async function createService(
    accountId: string,
    projectId: string,
    body: CreateServiceBody,
  ): Promise<Service> {
    const id = await requireProject(accountId, projectId);
    if ((await services.countLive(id)) >= SERVICES_PER_PROJECT) {
      throw conflict(
        `A project can have at most ${SERVICES_PER_PROJECT} services: delete one to create another.`,
      );
    }
    let service: Service;
    try {
      service = await services.insert({ accountId, projectId: id, name: body.name });
    } catch (err) {
      if (isUniqueViolation(err)) throw nameTaken(body.name);
      throw err;
    }
    // Without transactions the project can be deleted between the check and the insert, after
    // its cascade ran; such a service would outlive it, so it is taken back.
    if (!(await projects.existsLive(accountId, id))) {
      await services.remove(parseObjectId(service.id));
      throw notFound('Project');
    }
    return service;
  }

  async function renameService(
    accountId: string,
    projectId: string,
    serviceId: string,
    body: UpdateServiceBody,
  ): Promise<Service> {
    const id = await requireProject(accountId, projectId);
    const serviceKey = parseObjectId(serviceId, 'Service');
    // Checked before the write: FerretDB does not report a unique violation on update as such.
    if (await services.isNameTaken(id, body.name, serviceKey)) {
      if (!(await services.findLive(id, serviceKey))) throw notFound('Service');
      throw nameTaken(body.name);
    }
    let service: Service | null;
    try {
      service = await services.renameLive(id, serviceKey, body.name);
    } catch (err) {
      if (isUniqueViolation(err)) throw nameTaken(body.name);
      throw err;
    }
    if (!service) throw notFound('Service');
    return service;
  }

  /** Same pattern as deleteProject: marked deleted with its `service.deleted` event in one write. */
  async function deleteService(
    accountId: string,
    projectId: string,
    serviceId: string,
  ): Promise<void> {
    const id = await requireProject(accountId, projectId);
    const serviceKey = parseObjectId(serviceId, 'Service');
    const event = newEvent<ServiceDeletedEvent>({
      type: 'service.deleted',
      accountId,
      projectId: id.toHexString(),
      serviceId: serviceKey.toHexString(),
    });
    const deleted = await services.markDeleted(
      id,
      serviceKey,
      outboxEntry(TOPICS.serviceDeleted, event.serviceId, event),
    );
    if (!deleted) throw notFound('Service');
  }

  return { getService, listServices, createService, renameService, deleteService };
}

export type ServicesService = ReturnType<typeof createServicesService>;
