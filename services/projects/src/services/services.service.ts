import {
  conflict,
  newEvent,
  notFound,
  outboxEntry,
  parseObjectId,
  rejectDuplicate,
  TOPICS,
  type ListQuery,
  type ServiceDeletedEvent,
} from '@platform/shared';
import type { ProjectsRepository } from '../projects/projects.repository';
import type { Service, ServiceOwner, ServicesRepository } from './services.repository';
import type { CreateServiceBody, UpdateServiceBody } from './services.schemas';

/** Keeps the unpaged list of a project's services bounded, as the project quota does for projects. */
export const SERVICES_PER_PROJECT = 1_000;

const nameTaken = (name: string) => () =>
  conflict(`A service named "${name}" already exists in this project.`);

export function createServicesService(deps: {
  projects: ProjectsRepository;
  services: ServicesRepository;
}) {
  const { projects, services } = deps;

  /** Every route here sits under a project: a missing, deleted or foreign one hides its services. */
  async function requireProject(accountId: string, projectId: string): Promise<ServiceOwner> {
    const id = parseObjectId(projectId, 'Project');
    if (!(await projects.findLive({ accountId }, id))) throw notFound('Project');
    return { projectId: id, accountId };
  }

  async function getService(
    accountId: string,
    projectId: string,
    serviceId: string,
  ): Promise<Service> {
    const owner = { projectId: parseObjectId(projectId, 'Project'), accountId };
    const serviceKey = parseObjectId(serviceId, 'Service');
    // Side by side: this backs the internal endpoint that deployments call on every request.
    const [project, service] = await Promise.all([
      projects.findLive({ accountId }, owner.projectId),
      services.findLive(owner, serviceKey),
    ]);
    if (!project) throw notFound('Project');
    if (!service) throw notFound('Service');
    return service;
  }

  async function listServices(accountId: string, projectId: string, query: ListQuery) {
    return services.listLive(await requireProject(accountId, projectId), query);
  }

  async function createService(
    accountId: string,
    projectId: string,
    body: CreateServiceBody,
  ): Promise<Service> {
    const owner = await requireProject(accountId, projectId);
    if ((await services.countLive(owner)) >= SERVICES_PER_PROJECT) {
      throw conflict(
        `A project can have at most ${SERVICES_PER_PROJECT} services: delete one to create another.`,
      );
    }
    const service = await rejectDuplicate(services.insert(owner, body), nameTaken(body.name));
    // The project can be deleted between the check and the insert, after its cascade ran; such a
    // service would outlive it, so it is taken back.
    if (!(await projects.findLive({ accountId }, owner.projectId))) {
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
    const owner = await requireProject(accountId, projectId);
    const service = await rejectDuplicate(
      services.updateLive(owner, parseObjectId(serviceId, 'Service'), body),
      nameTaken(body.name),
    );
    if (!service) throw notFound('Service');
    return service;
  }

  /** Same pattern as deleteProject: marked deleted with its `service.deleted` event in one write. */
  async function deleteService(
    accountId: string,
    projectId: string,
    serviceId: string,
  ): Promise<void> {
    const owner = await requireProject(accountId, projectId);
    const serviceKey = parseObjectId(serviceId, 'Service');
    const event = newEvent<ServiceDeletedEvent>({
      type: 'service.deleted',
      accountId,
      projectId: owner.projectId.toHexString(),
      serviceId: serviceKey.toHexString(),
    });
    const deleted = await services.markDeleted(
      owner,
      serviceKey,
      outboxEntry(TOPICS.serviceDeleted, event.serviceId, event),
    );
    if (!deleted) throw notFound('Service');
  }

  return { getService, listServices, createService, renameService, deleteService };
}

export type ServicesService = ReturnType<typeof createServicesService>;
