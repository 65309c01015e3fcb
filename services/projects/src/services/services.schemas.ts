import { z } from 'zod';
import { multilineText, validationError, type OwnedResource } from '@platform/shared';
import { nameSchema, toNamedResponse } from '../names/named-resources.schemas';
import { DEFAULT_SETTINGS, type ServiceSettings } from './services.model';
import type { Service } from './services.repository';

export const COMMAND_MAX_LENGTH = 1_000;
const URL_MAX_LENGTH = 2_000;
const PATH_MAX_LENGTH = 1_000;
const BRANCH_MAX_LENGTH = 255;

const CONTROL_CHARACTERS = /\p{Cc}/u;

/** Schemes a repository URL may have; http and file only with SOURCE_ALLOW_LOCAL. */
export const REPOSITORY_SCHEMES = ['https:', 'http:', 'file:'];

/**
 * A git URL: https, http or file, no credentials in it. Whether http/file and private hosts are
 * allowed depends on the setting SOURCE_ALLOW_LOCAL: ServicesService checks that.
 */
const repositorySchema = z
  .string()
  .trim()
  .min(1, 'must not be empty: null means no repository')
  .max(URL_MAX_LENGTH, `must be at most ${URL_MAX_LENGTH} characters`)
  .superRefine((text, ctx) => {
    const problem = repositoryProblem(text);
    if (problem) ctx.addIssue({ code: z.ZodIssueCode.custom, message: problem });
  });

function repositoryProblem(text: string): string | null {
  if (text === '') return null; // said by min(1)
  if (CONTROL_CHARACTERS.test(text)) return 'must not contain control characters';
  if (!URL.canParse(text)) return 'must be an absolute URL such as https://host/owner/repo.git';
  const url = new URL(text);
  if (!REPOSITORY_SCHEMES.includes(url.protocol)) return 'must be an https:// URL';
  if (url.username || url.password) {
    return 'must not contain credentials: the repository must be readable without them';
  }
  if (url.protocol !== 'file:' && !url.hostname) return 'must name a host';
  if (url.protocol === 'file:' && (url.hostname || url.pathname === '/')) {
    return 'must be a file:///absolute/path URL';
  }
  return null;
}

/** A git branch name, as `git check-ref-format --branch` would take it. */
const branchSchema = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(BRANCH_MAX_LENGTH, `must be at most ${BRANCH_MAX_LENGTH} characters`)
  .refine(
    (branch) =>
      !/[\p{Cc}\s~^:?*[\\]/u.test(branch) &&
      !/(^[-/.]|\/\.|\.\.|\/\/|@\{|[/.]$|\.lock$|\.lock\/)/.test(branch) &&
      branch !== '@',
    'must be a valid git branch name',
  );

/** A relative directory inside the repository: no `..`, no leading `/`. */
const rootDirectorySchema = z
  .string()
  .trim()
  .max(PATH_MAX_LENGTH, `must be at most ${PATH_MAX_LENGTH} characters`)
  // One pattern (control characters as ranges), so that the API document carries it.
  .regex(
    // eslint-disable-next-line no-control-regex -- refusing control characters is the point
    /^(?:[^/\x00-\x1f\x7f-\x9f\\][^\x00-\x1f\x7f-\x9f\\]*)?$/,
    'must be relative to the repository (no leading /), without control characters or backslashes',
  )
  .refine((dir) => !dir.split('/').includes('..'), 'must stay inside the repository (no ..)')
  // `apps/web/` and `./apps/web` name `apps/web`; `.` names the repository's root.
  .transform((dir) =>
    dir
      .split('/')
      .filter((part) => part !== '' && part !== '.')
      .join('/'),
  );

// Commands may span lines (run with sh -c); an empty one is no command.
const commandSchema = multilineText(COMMAND_MAX_LENGTH).transform((command) =>
  command.trim() === '' ? null : command,
);

const healthCheckPathSchema = z
  .string()
  .trim()
  .max(PATH_MAX_LENGTH, `must be at most ${PATH_MAX_LENGTH} characters`)
  // Control characters as ranges (not \p{Cc}): the API document carries this pattern.
  // eslint-disable-next-line no-control-regex -- refusing control characters is the point
  .regex(/^\/[^\s\x00-\x1f\x7f-\x9f#]*$/, 'must be a path starting with / (no spaces or #)');

/** `null` puts a setting with a default back to it (contracts.md: null clears). */
const orDefault = <T extends z.ZodTypeAny>(schema: T, fallback: z.output<T>) =>
  schema
    .nullable()
    .optional()
    .transform((value: z.output<T> | null | undefined) => (value === null ? fallback : value));

/** What each setting means, as the API document says it (tools/openapi). */
export const SETTING_DESCRIPTIONS = {
  repository:
    'A git URL: `https://host/owner/repo.git`. No credentials inside it; a host that resolves to a loopback, private, shared, link-local or multicast address is 400. `http://` and `file:///path` only when the platform runs with `SOURCE_ALLOW_LOCAL=true` (the local stack). null: no repository (a deployment then fails at once).',
  branch: 'A git branch name, fetched with the commit. Default `main`.',
  rootDirectory:
    'Where the commands run: a path relative to the repository\'s root, without `..` or a leading `/` (`./a//b/` is stored as `a/b`). Default `""`, the root.',
  buildCommand:
    'Run in `rootDirectory` of the checkout to build it; null: no build step. Up to 1,000 characters, run with `sh -c`; control characters other than newline and tab are refused. An empty or blank command is stored as null.',
  startCommand:
    'The long-running process of the app; it must listen on `$PORT`. null: none. Up to 1,000 characters, run with `sh -c`; control characters other than newline and tab are refused. An empty or blank command is stored as null.',
  healthCheckPath:
    'Requested with GET once the app has started: a 2xx or 3xx answer makes the deployment live. Starts with `/`. Default `/`.',
};

const settingsFields = {
  repository: repositorySchema.nullable().optional().describe(SETTING_DESCRIPTIONS.repository),
  branch: orDefault(branchSchema, DEFAULT_SETTINGS.branch).describe(SETTING_DESCRIPTIONS.branch),
  rootDirectory: orDefault(rootDirectorySchema, DEFAULT_SETTINGS.rootDirectory).describe(
    SETTING_DESCRIPTIONS.rootDirectory,
  ),
  buildCommand: commandSchema.nullable().optional().describe(SETTING_DESCRIPTIONS.buildCommand),
  startCommand: commandSchema.nullable().optional().describe(SETTING_DESCRIPTIONS.startCommand),
  healthCheckPath: orDefault(healthCheckPathSchema, DEFAULT_SETTINGS.healthCheckPath).describe(
    SETTING_DESCRIPTIONS.healthCheckPath,
  ),
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
