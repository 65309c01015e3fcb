import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './checker';

/* eslint-disable @typescript-eslint/no-explicit-any -- zod internals are reached structurally */

/** The part of a zod schema this module uses (zod is the services' dependency, not ours). */
interface EnvSchema {
  safeParse(input: unknown): {
    success: boolean;
    data?: unknown;
    error?: { issues: { path: (string | number)[]; message: string }[] };
  };
}

export interface ServiceConfig {
  /** Repository-relative path of the config module. */
  file: string;
  schema: EnvSchema;
  /** Every variable the schema reads, defaults or not. */
  knownVariables: Set<string>;
}

/**
 * Loads a process's environment schema from its `src/config.ts`, the same module its `main.ts`
 * hands to `loadConfig`: the export that is a zod schema (it has `safeParse`).
 */
export function loadServiceConfig(file: string): ServiceConfig {
  const full = path.join(REPO_ROOT, file);
  if (!fs.existsSync(full)) throw new Error(`${file} does not exist`);
  const exports = require(full) as Record<string, unknown>;
  const schemas = Object.entries(exports).filter(
    ([, value]) => typeof (value as EnvSchema | undefined)?.safeParse === 'function',
  );
  if (schemas.length !== 1) {
    throw new Error(
      `${file} should export exactly one zod schema, found ${schemas.map(([n]) => n).join(', ') || 'none'}`,
    );
  }
  const schema = schemas[0]![1] as EnvSchema;
  return { file, schema, knownVariables: variablesOf(schema) };
}

/** The keys of the object schema inside any refine/transform/default wrappers. */
function variablesOf(schema: any): Set<string> {
  let current = schema;
  for (let depth = 0; current && depth < 20; depth++) {
    const def = current._def ?? {};
    const shape = typeof current.shape === 'object' ? current.shape : def.shape?.();
    if (shape) return new Set(Object.keys(shape));
    current = def.schema ?? def.innerType ?? def.in;
  }
  throw new Error('cannot find the object schema inside the config schema');
}

/** What the process would print at start-up and exit 1 for, one line per problem; [] = it starts. */
export function configProblems(config: ServiceConfig, env: Record<string, string>): string[] {
  const result = config.schema.safeParse(env);
  if (result.success) return [];
  return (result.error?.issues ?? []).map(
    (issue) => `${issue.path.join('.') || '(env)'}: ${issue.message}`,
  );
}

/** The configuration the process would run with (its schema's output, defaults applied). */
export function parsedConfig<T = Record<string, any>>(
  config: ServiceConfig,
  env: Record<string, string>,
): T {
  const problems = configProblems(config, env);
  if (problems.length > 0) throw new Error(`${config.file}: ${problems.join('; ')}`);
  return config.schema.safeParse(env).data as T;
}
