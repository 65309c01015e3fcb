import {
  newEvent,
  notFound,
  parseObjectId,
  TOPICS,
  type ListQuery,
  type ServiceDeletedEvent,
} from '@platform/shared';
import { NamedResourceService } from '../names/named-resources.service';
import type { ProjectsRepository } from '../projects/projects.repository';
import type { ServiceDocument } from './services.model';
import type { Service, ServiceOwner, ServicesRepository } from './services.repository';
import type { CreateServiceBody, UpdateServiceBody } from './services.schemas';

/** Keeps the unpaged list of a project's services bounded, as the project quota does for projects. */
export const SERVICES_PER_PROJECT = 1_000;

/**
 * The services of one of the caller's projects (NamedResourceService holds what projects share).
 * Every route here sits under a project: a missing, deleted or foreign one hides its services.
 */
export class ServicesService extends NamedResourceService<ServiceDocument, ServiceOwner, Service> {
  private readonly projects: ProjectsRepository;
  private readonly services: ServicesRepository;

  constructor(deps: { projects: ProjectsRepository; services: ServicesRepository }) {
    super(deps.services, {
      what: 'Service',
      quota: SERVICES_PER_PROJECT,
      quotaReachedMessage: `A project can have at most ${SERVICES_PER_PROJECT} services: delete one to create another.`,
      nameTakenMessage: (name) => `A service named "${name}" already exists in this project.`,
    });
    this.projects = deps.projects;
    this.services = deps.services;
  }

  async getService(accountId: string, projectId: string, serviceId: string): Promise<Service> {
    const owner = { projectId: parseObjectId(projectId, 'Project'), accountId };
    const serviceKey = this.idOf(serviceId);
    // Side by side: this backs the internal endpoint that deployments call on every request.
    const [project, service] = await Promise.all([
      this.projects.findLive({ accountId }, owner.projectId),
      this.services.findLive(owner, serviceKey),
    ]);
    if (!project) throw notFound('Project');
    if (!service) throw notFound('Service');
    return service;
  }

  async listServices(accountId: string, projectId: string, query: ListQuery) {
    return this.listOwned(await this.requireProject(accountId, projectId), query);
  }

  async createService(
    accountId: string,
    projectId: string,
    body: CreateServiceBody,
  ): Promise<Service> {
    const owner = await this.requireProject(accountId, projectId);
    const service = await this.createOwned(owner, body);
    // The project can be deleted between the check and the insert, after its cascade ran; such a
    // service would outlive it, so it is taken back.
    if (!(await this.projects.findLive({ accountId }, owner.projectId))) {
      await this.services.remove(parseObjectId(service.id));
      throw notFound('Project');
    }
    return service;
  }

  async renameService(
    accountId: string,
    projectId: string,
    serviceId: string,
    body: UpdateServiceBody,
  ): Promise<Service> {
    return this.updateOwned(await this.requireProject(accountId, projectId), serviceId, body);
  }

  async deleteService(accountId: string, projectId: string, serviceId: string): Promise<void> {
    const owner = await this.requireProject(accountId, projectId);
    await this.deleteOwned(owner, serviceId, TOPICS.serviceDeleted, (id) =>
      newEvent<ServiceDeletedEvent>({
        type: 'service.deleted',
        accountId,
        projectId: owner.projectId.toHexString(),
        serviceId: id.toHexString(),
      }),
    );
  }

  private async requireProject(accountId: string, projectId: string): Promise<ServiceOwner> {
    const id = parseObjectId(projectId, 'Project');
    if (!(await this.projects.findLive({ accountId }, id))) throw notFound('Project');
    return { projectId: id, accountId };
  }
}
