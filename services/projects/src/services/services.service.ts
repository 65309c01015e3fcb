import { fileURLToPath } from 'node:url';
import {
  allowsLocalFiles,
  allowsLocalNetwork,
  checkLocalRepository,
  newEvent,
  nonPublicAddressOf,
  notFound,
  parseObjectId,
  TOPICS,
  validationError,
  type ListQuery,
  type LocalSourcePolicy,
  type LookupHost,
  type ServiceDeletedEvent,
} from '@platform/shared';
import { NamedResourceService } from '../names/named-resources.service';
import type { ProjectsRepository } from '../projects/projects.repository';
import type { ServiceDocument } from './services.model';
import type { Service, ServiceOwner, ServicesRepository } from './services.repository';
import type { CreateServiceBody, UpdateServiceBody } from './services.schemas';

/** Keeps the unpaged list of a project's services bounded, as the project quota does for projects. */
export const SERVICES_PER_PROJECT = 1_000;

/** Where a service's repository may be (the setting SOURCE_ALLOW_LOCAL). */
export interface SourcePolicy {
  /** http://, file:// and hosts with private addresses: the local stack's fixtures. */
  local: LocalSourcePolicy;
  /** How host names are resolved; the system's unless a test says otherwise. */
  lookupHost?: LookupHost;
}

/**
 * The services of one of the caller's projects (NamedResourceService holds what projects share).
 * Every route here sits under a project: a missing, deleted or foreign one hides its services.
 */
export class ServicesService extends NamedResourceService<ServiceDocument, ServiceOwner, Service> {
  private readonly projects: ProjectsRepository;
  private readonly services: ServicesRepository;

  private readonly sources: SourcePolicy;

  constructor(deps: {
    projects: ProjectsRepository;
    services: ServicesRepository;
    sources: SourcePolicy;
  }) {
    super(deps.services, {
      what: 'Service',
      quota: SERVICES_PER_PROJECT,
      quotaReachedMessage: `A project can have at most ${SERVICES_PER_PROJECT} services: delete one to create another.`,
      nameTakenMessage: (name) => `A service named "${name}" already exists in this project.`,
    });
    this.projects = deps.projects;
    this.services = deps.services;
    this.sources = deps.sources;
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
    const owner = await this.ownerForSettings(accountId, projectId, body.repository);
    const service = await this.createOwned(owner, body);
    // The project can be deleted between the check and the insert, after its cascade ran; such a
    // service would outlive it, so it is taken back.
    if (!(await this.projects.findLive({ accountId }, owner.projectId))) {
      await this.services.remove(parseObjectId(service.id));
      throw notFound('Project');
    }
    return service;
  }

  /** Renames it and/or changes its settings (null puts a setting back to its default). */
  async updateService(
    accountId: string,
    projectId: string,
    serviceId: string,
    body: UpdateServiceBody,
  ): Promise<Service> {
    const owner = await this.ownerForSettings(accountId, projectId, body.repository);
    return this.updateOwned(owner, serviceId, body);
  }

  /** The caller's project, under which a service may be given this repository (or none). */
  private async ownerForSettings(
    accountId: string,
    projectId: string,
    repository: string | null | undefined,
  ) {
    const owner = await this.requireProject(accountId, projectId);
    await this.assertRepositoryAllowed(repository);
    return owner;
  }

  /** The live service of the caller's project, as its owner: 404 otherwise. */
  async requireService(accountId: string, projectId: string, serviceId: string) {
    const service = await this.getService(accountId, projectId, serviceId);
    return {
      service,
      owner: { projectId: parseObjectId(service.projectId), accountId },
      id: parseObjectId(service.id),
    };
  }

  /**
   * The part of the repository rule that depends on the settings: http:// and private hosts only
   * with SOURCE_ALLOW_LOCAL=true, no other host with a non-public address (the webhook rule);
   * file:// only with SOURCE_ALLOW_LOCAL true or a directory, its real path inside that directory
   * and never in the platform's own files. Early feedback: the fetch checks all of it again (DNS
   * and symlinks can change after this).
   */
  private async assertRepositoryAllowed(repository: string | null | undefined): Promise<void> {
    if (!repository) return;
    const url = new URL(repository);
    const refuse = (message: string) => validationError([{ path: 'repository', message }]);
    const { local } = this.sources;
    const httpsOnly = () =>
      refuse('must be an https:// URL (http:// and file:// are for the local stack only)');
    if (url.protocol === 'file:') {
      if (!allowsLocalFiles(local.setting)) throw httpsOnly();
      const checked = await checkLocalRepository(local, fileURLToPath(url));
      if ('problem' in checked) throw refuse(`is refused: ${checked.problem}`);
      return;
    }
    if (allowsLocalNetwork(local.setting)) return;
    if (url.protocol !== 'https:') throw httpsOnly();
    const address = await nonPublicAddressOf(url.hostname, this.sources.lookupHost);
    if (address) {
      throw refuse(
        `must be on a public host: ${url.hostname} is a ${address.kind} address (${address.address})`,
      );
    }
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
