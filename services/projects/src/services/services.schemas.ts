import { z } from 'zod';
import {
  branchRule,
  commandRule,
  healthCheckPathRule,
  replicasRule,
  repositoryRule,
  rootDirectoryRule,
  dockerfilePathRule,
  validationError,
  type OwnedResource,
  DEFAULT_SERVICE_SETTINGS,
  type ServiceSettings,
} from '@platform/shared';
import { nameSchema, toNamedResponse } from '../names/named-resources.schemas';

import type { Service } from './services.repository';

// Each field's rules are libs/shared's source-rules (what NUL, newlines and a leading dash do in
// each), which the deployments service applies again to the snapshot it builds from. What is
// added here is the API's leniency: surrounding spaces trimmed, a root directory normalised.

/**
 * A git URL: https, http or file, no credentials in it. Whether http/file and private hosts are
 * allowed depends on the setting SOURCE_ALLOW_LOCAL: ServicesService checks that.
 */
const repositorySchema = repositoryRule(
  z.string().trim().min(1, 'must not be empty: null means no repository'),
);

const branchSchema = branchRule(z.string().trim());

/** `apps/web/` and `./apps/web` name `apps/web`; `.` names the repository's root. */
const normalisedPath = (dir: string) =>
  dir
    .split('/')
    .filter((part) => part !== '' && part !== '.')
    .join('/');

const rootDirectorySchema = rootDirectoryRule(z.string().trim()).transform(normalisedPath);

const dockerfilePathSchema = dockerfilePathRule(z.string().trim())
  .transform(normalisedPath)
  .refine((file) => file !== '', "must name a file, not the repository's root");

// Commands may span lines (run with sh -c); an empty one is no command.
const commandSchema = commandRule().transform((command) =>
  command.trim() === '' ? null : command,
);

const healthCheckPathSchema = healthCheckPathRule(z.string().trim());

/** `null` puts a setting with a default back to it (contracts.md: null clears). */
const orDefault = <T extends z.ZodTypeAny>(schema: T, fallback: z.output<T>) =>
  schema
    .nullable()
    .optional()
    .transform((value: z.output<T> | null | undefined) => (value === null ? fallback : value));

/** What each setting means, as the API document says it (tools/openapi). */
export const SETTING_DESCRIPTIONS = {
  repository:
    "A git URL: `https://host/owner/repo.git`. No credentials inside it, no control characters; a host that resolves to a loopback, private, shared, link-local or multicast address is 400. `http://`, private hosts and `file:///path` only when the platform runs with `SOURCE_ALLOW_LOCAL=true` (the local stack); with `SOURCE_ALLOW_LOCAL=<directory>`, `file://` repositories under that directory only. A `file://` repository is never one of the platform's own files, whatever the setting (its real path, symlinks resolved, is checked when saved and again when fetched). null: no repository (a deployment then fails at once).",
  branch:
    'A git branch name, fetched with the commit. Default `main`. Refused (400): a leading `-`, spaces and control characters (NUL, newline, carriage return), and what git does not take as a branch name (`..`, `~^:?*[\\`, `@{`, a trailing `.lock`). git only ever gets it inside `refs/heads/<branch>`, after `--end-of-options`.',
  rootDirectory:
    'Where the commands run: a path relative to the repository\'s root, without `..`, a leading `/`, backslashes or control characters (NUL, newline, carriage return: 400) (`./a//b/` is stored as `a/b`). A leading `-` is allowed: the platform only ever uses it as part of the absolute path `<workspace>/<rootDirectory>`. Default `""`, the root.',
  buildCommand:
    'Run in `rootDirectory` of the checkout to build it; null: no build step. Up to 1,000 characters, a script for `sh -c`: newlines and tabs are allowed (a multi-line script), other control characters (NUL, carriage return) are refused. A leading `-` is allowed: the command is only ever the text of the script, never an option of the shell. An empty or blank command is stored as null.',
  startCommand:
    'The long-running process of the app; it must listen on `$PORT`. null: none. Up to 1,000 characters, a script for `sh -c`: newlines and tabs are allowed, other control characters (NUL, carriage return) are refused. A leading `-` is allowed: the command is only ever the text of the script, never an option of the shell. An empty or blank command is stored as null.',
  healthCheckPath:
    'Requested with GET once the app has started: a 2xx or 3xx answer makes the deployment live. Starts with `/`; spaces, `#` and control characters (NUL, and newline and carriage return, which would split the request) are refused. Default `/`.',
  dockerfilePath:
    "A Dockerfile in the repository that builds the app's image: a path from the repository's root, with `rootDirectory`'s rules (`./docker//web.Dockerfile` is stored as `docker/web.Dockerfile`); its build context is `rootDirectory`, and `buildCommand` and `startCommand` are not used (the image's own command runs, and must listen on `$PORT`). Each `FROM` must name an image of the platform's registry (e.g. `platform/node:22.23.3`), or an earlier stage. Only where the platform runs apps on Kubernetes (`RUNTIME=kubernetes`); elsewhere such a deployment is FAILED, its log saying why. null (the default): none, the platform's base image and `buildCommand`.",
  replicas:
    'How many copies of the live deployment serve `url`: a whole number from 1 to 10, default 1. Requests are spread over the healthy copies; a deployment is DEPLOYED when all of its copies answer `healthCheckPath` healthy, and a copy that exits is restarted while the others keep serving.',
};

const settingsFields = {
  repository: repositorySchema.nullable().optional().describe(SETTING_DESCRIPTIONS.repository),
  branch: orDefault(branchSchema, DEFAULT_SERVICE_SETTINGS.branch).describe(
    SETTING_DESCRIPTIONS.branch,
  ),
  rootDirectory: orDefault(rootDirectorySchema, DEFAULT_SERVICE_SETTINGS.rootDirectory).describe(
    SETTING_DESCRIPTIONS.rootDirectory,
  ),
  buildCommand: commandSchema.nullable().optional().describe(SETTING_DESCRIPTIONS.buildCommand),
  startCommand: commandSchema.nullable().optional().describe(SETTING_DESCRIPTIONS.startCommand),
  healthCheckPath: orDefault(
    healthCheckPathSchema,
    DEFAULT_SERVICE_SETTINGS.healthCheckPath,
  ).describe(SETTING_DESCRIPTIONS.healthCheckPath),
  replicas: orDefault(replicasRule(), DEFAULT_SERVICE_SETTINGS.replicas).describe(
    SETTING_DESCRIPTIONS.replicas,
  ),
  dockerfilePath: dockerfilePathSchema
    .nullable()
    .optional()
    .describe(SETTING_DESCRIPTIONS.dockerfilePath),
};

/** A new service: its name and any of its settings (`url` is read-only, so unknown here). */
const serviceName = nameSchema.describe(
  'Same rules as a project name; unique within the project (409). A project holds at most 1,000 services.',
);

export const createServiceBody = z.object({ name: serviceName, ...settingsFields }).strict();
export type CreateServiceBody = z.infer<typeof createServiceBody>;

// A body that changes nothing is refused by the route (nothingToChange), not here: a refinement
// would add its complaint to that of an unknown field.
export const updateServiceBody = z
  .object({ name: serviceName.optional(), ...settingsFields })
  .strict();
export type UpdateServiceBody = z.infer<typeof updateServiceBody>;

/** The 400 of a PATCH without the name or any setting; null when it changes something. */
export const nothingToChange = (body: UpdateServiceBody) =>
  Object.values(body).every((value) => value === undefined)
    ? validationError([{ path: 'name', message: 'give the name or a setting to change' }])
    : null;

/** A service's source and run settings, as every answer about it shows them. */
export const settingsOf = (service: Service): ServiceSettings => ({
  repository: service.repository,
  branch: service.branch,
  rootDirectory: service.rootDirectory,
  buildCommand: service.buildCommand,
  startCommand: service.startCommand,
  healthCheckPath: service.healthCheckPath,
  replicas: service.replicas,
  dockerfilePath: service.dockerfilePath,
});

/** The Service of contracts.md: id, projectId, name, createdAt, every setting and `url`. */
export const toServiceResponse = (service: Service) => ({
  ...toNamedResponse(service),
  projectId: service.projectId,
  ...settingsOf(service),
  url: service.url,
});

/** The internal endpoint's answer: what requireOwnership puts on deployments' requests. */
export const toOwnedService = (service: Service): OwnedResource => ({
  accountId: service.accountId,
  projectId: service.projectId,
  serviceId: service.id,
});
