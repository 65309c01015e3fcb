import { Types, type Model } from 'mongoose';
import {
  projectDeletedEvent,
  serviceDeletedEvent,
  TOPICS,
  type PlatformEvent,
} from '@platform/shared';
import type { NamedDocument } from '../names/named-resources.model';
import { PROJECTS_PER_ACCOUNT } from '../projects/projects.service';
import { SERVICES_PER_PROJECT } from '../services/services.service';
import { apiClient, buildProject, buildService, type ApiClient } from './api-client';
import type { TestApp } from './test-app';

/** A project's or a service's model, as the shared tests read it (what both have). */
export type NamedModel = Model<NamedDocument & { accountId: string }>;
const asNamed = <D extends NamedDocument>(model: Model<D>) => model as unknown as NamedModel;

/** A refused request body: what is wrong with it, the body, the field at fault. */
export type Refusal = [string, Record<string, unknown>, string];

/** What the API answers for a project or a service: at least these. */
export interface NamedBody {
  id: string;
  name: string;
  createdAt: string;
  [field: string]: string | number | null;
}

/** Where a test creates projects or services of its own: one owner's list. */
export interface Place {
  client: ApiClient;
  /** `/api/projects`, or `/api/projects/:projectId/services` */
  path: string;
  /** What the documents created here share in the database: `{accountId}` or `{projectId}`. */
  filter: Record<string, unknown>;
  /** What each answer about one created here shows of where it is: nothing, or `{projectId}`. */
  shown: Record<string, string>;
  /** Creates one here through the API, with a unique name unless given. */
  build(fields?: Record<string, string>): Promise<NamedBody>;
}

/**
 * Projects and services behave alike (NamedResourceService), so their shared tests run over
 * both: `describe.each(FEATURES)`. This is what tells them apart in those tests.
 */
export interface Feature {
  /** The 404 says `${what} not found.` */
  what: 'Project' | 'Service';
  plural: 'projects' | 'services';
  model(app: TestApp): NamedModel;
  /** A new owner's place: a new account's projects, or a new project's services. */
  place(app: TestApp): Promise<Place>;
  /** Another owner's place, where the names of `place` are free: another account, or project. */
  besides(app: TestApp, place: Place): Promise<Place>;
  /** Exactly the fields of one, sorted. */
  fields: string[];
  /** An item of the list, from the whole of one. */
  listItem(body: NamedBody): Record<string, string | number | null>;
  /** Exactly the fields of a list item, sorted. */
  listFields: string[];
  /** What can be set besides the name, as a sample. */
  otherFields: Record<string, string>;
  /** Where a PATCH without any field is refused. */
  emptyPatchPath: string;
  /** Refused creates beyond those of the name. */
  invalidCreates: Refusal[];
  nameTaken(name: string): string;
  quota: number;
  quotaReached: string;
  deletedTopic: string;
  /** The deletion event of `body`, created at `place`, as its shared schema reads it. */
  deletedEvent(place: Place, body: NamedBody): Record<string, unknown>;
  parseDeletedEvent(payload: unknown): PlatformEvent;
}

const projectPlace = (app: TestApp): Place => {
  const client = apiClient(app.url);
  return {
    client,
    path: '/api/projects',
    filter: { accountId: client.accountId },
    shown: {},
    build: async (fields) => ({ ...(await buildProject(client, fields)) }),
  };
};

async function servicePlace(client: ApiClient): Promise<Place> {
  const project = await buildProject(client);
  return {
    client,
    path: `/api/projects/${project.id}/services`,
    filter: { projectId: new Types.ObjectId(project.id) },
    shown: { projectId: project.id },
    build: async (fields) => ({ ...(await buildService(client, project.id, fields)) }),
  };
}

export const PROJECTS: Feature = {
  what: 'Project',
  plural: 'projects',
  model: (app) => asNamed(app.models.projects),
  place: async (app) => projectPlace(app),
  besides: async (app) => projectPlace(app),
  fields: ['createdAt', 'description', 'id', 'name'],
  listItem: ({ id, name, createdAt }) => ({ id, name, createdAt }),
  listFields: ['createdAt', 'id', 'name'],
  otherFields: { description: 'Storefront' },
  emptyPatchPath: '(body)',
  invalidCreates: [
    [
      'the description is longer than 2,000 characters',
      { name: 'ok', description: 'd'.repeat(2001) },
      'description',
    ],
    ['the description is not a string', { name: 'ok', description: null }, 'description'],
  ],
  nameTaken: (name) => `A project named "${name}" already exists.`,
  quota: PROJECTS_PER_ACCOUNT,
  quotaReached: 'An account can have at most 1000 projects: delete one to create another.',
  deletedTopic: TOPICS.projectDeleted,
  deletedEvent: (place, body) => ({ accountId: place.client.accountId, projectId: body.id }),
  parseDeletedEvent: (payload) => projectDeletedEvent.parse(payload),
};

/** Every service response carries every setting (contracts.md, Services). */
const SERVICE_FIELDS = [
  'branch',
  'buildCommand',
  'createdAt',
  'dockerfilePath',
  'healthCheckPath',
  'id',
  'name',
  'projectId',
  'replicas',
  'repository',
  'rootDirectory',
  'startCommand',
  'url',
];

export const SERVICES: Feature = {
  what: 'Service',
  plural: 'services',
  model: (app) => asNamed(app.models.services),
  place: (app) => servicePlace(apiClient(app.url)),
  besides: (_app, place) => servicePlace(place.client),
  fields: SERVICE_FIELDS,
  listItem: (body) => body,
  listFields: SERVICE_FIELDS,
  otherFields: { buildCommand: 'npm run build' },
  emptyPatchPath: 'name',
  invalidCreates: [
    [
      'a field is unknown',
      { name: 'ok', projectId: new Types.ObjectId().toHexString() },
      'projectId',
    ],
  ],
  nameTaken: (name) => `A service named "${name}" already exists in this project.`,
  quota: SERVICES_PER_PROJECT,
  quotaReached: 'A project can have at most 1000 services: delete one to create another.',
  deletedTopic: TOPICS.serviceDeleted,
  deletedEvent: (place, body) => ({
    accountId: place.client.accountId,
    projectId: body.projectId,
    serviceId: body.id,
  }),
  parseDeletedEvent: (payload) => serviceDeletedEvent.parse(payload),
};

export const FEATURES = [PROJECTS, SERVICES];
