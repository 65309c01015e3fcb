import { z } from 'zod';
import { multilineText } from '../http/validation';

/*
 * What a tenant may write into the fields that reach a command line or a request the platform
 * makes (contracts.md, "Services", "Variables", "What a tenant's code can reach": nothing a tenant
 * writes becomes an option). One definition, checked by the projects service when a tenant saves
 * a field and again by the deployments service before it uses the source snapshot.
 *
 * | field             | NUL     | newline (LF), CR                  | leading `-`                    |
 * |-------------------|---------|-----------------------------------|--------------------------------|
 * | variable name     | refused | refused                           | refused (the name pattern)     |
 * | variable value    | refused | allowed: an environment value     | allowed: never an argument     |
 * | repository        | refused | refused                           | impossible: starts with scheme |
 * | branch            | refused | refused                           | refused (git option injection) |
 * | rootDirectory     | refused | refused                           | allowed: only ever a part of `<workspace>/<rootDirectory>`, an absolute path |
 * | build/startCommand| refused | LF and tab allowed (scripts), CR refused | allowed: run as a script after a line of the platform's own, so `sh -c` never reads it as an option |
 * | healthCheckPath   | refused | refused (request splitting)       | impossible: starts with `/`    |
 * | dockerfilePath    | refused | refused                           | allowed: only ever a part of `<workspace>/<dockerfilePath>`, an absolute path |
 */

/* eslint-disable no-control-regex -- refusing control characters is the point */
// Control characters as ranges (not \p{Cc}): the API document carries these patterns.
const CONTROL_CHARACTER = /[\x00-\x1f\x7f-\x9f]/;
const NO_NUL = /^[^\x00]*$/;
/* eslint-enable no-control-regex */

export const VARIABLE_NAME_PATTERN = /^[A-Z_][A-Z0-9_]{0,127}$/;
export const VARIABLE_VALUE_MAX_BYTES = 32 * 1024;
export const COMMAND_MAX_LENGTH = 1_000;
export const REPOSITORY_MAX_LENGTH = 2_000;
export const PATH_MAX_LENGTH = 1_000;
export const BRANCH_MAX_LENGTH = 255;

/** Schemes a repository URL may have; http and file only with SOURCE_ALLOW_LOCAL. */
export const REPOSITORY_SCHEMES = ['https:', 'http:', 'file:'];

/** Names the platform sets itself in a build's and an app's environment. */
export const isReservedVariableName = (name: string) =>
  name === 'PORT' || name.startsWith('PLATFORM_');

/** An environment variable's name as the platform passes it: the pattern, nothing reserved. */
export const environmentNameRule = () =>
  z.string().regex(VARIABLE_NAME_PATTERN, 'must match ^[A-Z_][A-Z0-9_]{0,127}$');

/** A tenant's variable name: the pattern, and `PORT` and `PLATFORM_*` are the platform's. */
export const variableNameRule = () =>
  environmentNameRule().refine((name) => !isReservedVariableName(name), {
    message: 'is reserved by the platform (PORT and names starting with PLATFORM_)',
  });

/** A variable's value: up to 32 KiB of UTF-8, no NUL (which would end it, or split arguments). */
export const variableValueRule = () =>
  z
    .string()
    .regex(NO_NUL, 'must not contain the NUL character')
    .refine((value) => Buffer.byteLength(value, 'utf8') <= VARIABLE_VALUE_MAX_BYTES, {
      message: `must be at most ${VARIABLE_VALUE_MAX_BYTES} bytes (32 KiB)`,
    });

/** The problem of a repository URL's form (the scheme's permission is SOURCE_ALLOW_LOCAL's). */
export function repositoryProblem(text: string): string | null {
  if (CONTROL_CHARACTER.test(text)) return 'must not contain control characters';
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

/** A git URL (https, http or file), no credentials, no control characters. */
export const repositoryRule = (base: z.ZodString = z.string()) =>
  base
    .max(REPOSITORY_MAX_LENGTH, `must be at most ${REPOSITORY_MAX_LENGTH} characters`)
    .superRefine((text, ctx) => {
      const problem = text === '' ? null : repositoryProblem(text);
      if (problem) ctx.addIssue({ code: z.ZodIssueCode.custom, message: problem });
    });

/**
 * A git branch name as `git check-ref-format --branch` takes it, and never one git could read as
 * an option: no leading `-`, no control character (NUL, newline), no space.
 */
export function isBranchName(branch: string): boolean {
  return (
    branch.length >= 1 &&
    branch.length <= BRANCH_MAX_LENGTH &&
    !/[\p{Cc}\s~^:?*[\\]/u.test(branch) &&
    !/(^[-/.]|\/\.|\.\.|\/\/|@\{|[/.]$|\.lock$|\.lock\/)/.test(branch) &&
    branch !== '@'
  );
}

export const branchRule = (base: z.ZodString = z.string()) =>
  base
    .min(1, 'must not be empty')
    .max(BRANCH_MAX_LENGTH, `must be at most ${BRANCH_MAX_LENGTH} characters`)
    .refine(
      (branch) => branch === '' || branch.length > BRANCH_MAX_LENGTH || isBranchName(branch),
      'must be a valid git branch name (no leading -, spaces or control characters)',
    );

/** A relative directory inside the repository: no `..`, no leading `/`, no control character. */
export const rootDirectoryRule = (base: z.ZodString = z.string()) =>
  base
    .max(PATH_MAX_LENGTH, `must be at most ${PATH_MAX_LENGTH} characters`)
    // One pattern (control characters as ranges), so that the API document carries it.
    .regex(
      // eslint-disable-next-line no-control-regex -- refusing control characters is the point
      /^(?:[^/\x00-\x1f\x7f-\x9f\\][^\x00-\x1f\x7f-\x9f\\]*)?$/,
      'must be relative to the repository (no leading /), without control characters or backslashes',
    )
    .refine((dir) => !dir.split('/').includes('..'), 'must stay inside the repository (no ..)');

/** A file in the repository: rootDirectory's rules, and not empty (`dockerfilePath`). */
export const dockerfilePathRule = (base: z.ZodString = z.string()) =>
  rootDirectoryRule(base.min(1, 'must name a file: null means none'));

/** A build or start command: a shell script for `sh -c`, so newlines and tabs are allowed. */
export const commandRule = () => multilineText(COMMAND_MAX_LENGTH);

/** The path the health check requests: starts with `/`; no space, `#` or control character. */
export const healthCheckPathRule = (base: z.ZodString = z.string()) =>
  base
    .max(PATH_MAX_LENGTH, `must be at most ${PATH_MAX_LENGTH} characters`)
    // eslint-disable-next-line no-control-regex -- refusing control characters is the point
    .regex(/^\/[^\s\x00-\x1f\x7f-\x9f#]*$/, 'must be a path starting with / (no spaces or #)');

/** How many copies of a release serve its service: a whole number, 1 to 10. */
export const REPLICAS_MIN = 1;
export const REPLICAS_MAX = 10;
export const replicasRule = () =>
  z
    .number()
    .int('must be a whole number')
    .min(REPLICAS_MIN, `must be at least ${REPLICAS_MIN}`)
    .max(REPLICAS_MAX, `must be at most ${REPLICAS_MAX}`);

/**
 * The source snapshot's fields as the projects service stores them (normalised), checked again
 * where they are used. Secret values are checked once opened (`variableValueProblem`).
 */
const sourceRules = z.object({
  repository: repositoryRule().nullable(),
  branch: branchRule(),
  rootDirectory: rootDirectoryRule(),
  buildCommand: commandRule().nullable(),
  startCommand: commandRule().nullable(),
  healthCheckPath: healthCheckPathRule(),
  replicas: replicasRule(),
  dockerfilePath: dockerfilePathRule().nullable(),
  variables: z.array(
    z.discriminatedUnion('secret', [
      z.object({ name: variableNameRule(), secret: z.literal(false), value: variableValueRule() }),
      z.object({ name: variableNameRule(), secret: z.literal(true), sealed: z.string() }),
    ]),
  ),
});

/** What `sourceProblem` checks: the settings and variables a deployment builds and runs. */
export type SourceFields = z.input<typeof sourceRules>;

/**
 * The first field of `source` that breaks the rules, said as the deployment's log line says it
 * (`branch: must be a valid git branch name …`, `variable 0 (name): …`); null when all hold.
 */
export function sourceProblem(source: SourceFields): string | null {
  const result = sourceRules.safeParse(source);
  if (result.success) return null;
  const issue = result.error.issues[0]!;
  return `${fieldName(issue.path, source)}: ${issue.message}`;
}

function fieldName(path: (string | number)[], source: SourceFields): string {
  if (path[0] !== 'variables') return path.join('.');
  const index = Number(path[1]);
  const field = path[2] ?? 'name';
  const name = String(source.variables[index]?.name ?? '');
  const shown = VARIABLE_NAME_PATTERN.test(name) ? ` ${name}` : '';
  return `variable ${index + 1}${shown} (${String(field)})`;
}

/** The problem of a variable's value (a secret one once opened), or null. */
export function variableValueProblem(value: string): string | null {
  const result = variableValueRule().safeParse(value);
  return result.success ? null : result.error.issues[0]!.message;
}
