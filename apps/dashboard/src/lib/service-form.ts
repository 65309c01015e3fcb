import type { Schemas } from '../api/client';

/** A service's source settings as a form edits them: text, '' where unset. */
export interface SourceForm {
  name: string;
  repository: string;
  branch: string;
  rootDirectory: string;
  buildCommand: string;
  startCommand: string;
  healthCheckPath: string;
  replicas: string;
  dockerfilePath: string;
}

export const emptySource: SourceForm = {
  name: '',
  repository: '',
  branch: '',
  rootDirectory: '',
  buildCommand: '',
  startCommand: '',
  healthCheckPath: '',
  replicas: '',
  dockerfilePath: '',
};

export const sourceFormOf = (service: Schemas['Service']): SourceForm => ({
  name: service.name,
  repository: service.repository ?? '',
  branch: service.branch ?? '',
  rootDirectory: service.rootDirectory ?? '',
  buildCommand: service.buildCommand ?? '',
  startCommand: service.startCommand ?? '',
  healthCheckPath: service.healthCheckPath ?? '',
  replicas: String(service.replicas),
  dockerfilePath: service.dockerfilePath ?? '',
});

/** How many copies of a service's live deployment serve it (contracts.md "Services"). */
export const REPLICAS_MIN = 1;
export const REPLICAS_MAX = 10;

/** A number as a person writes one: `3`, `+3`, `3.0`; not `1e1`, `0x5`, `Infinity`, `３`. */
const DECIMAL = /^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)$/;

/**
 * What the API would refuse in the form, per field, in the API's own words, said before anything
 * is sent: `replicas` must be a whole number from 1 to 10 (empty: the default, 1). Empty when
 * the form may be sent.
 */
export function sourceProblems(form: SourceForm): Record<string, string> {
  const replicas = form.replicas.trim();
  if (replicas === '') return {};
  const count = Number(replicas);
  if (!DECIMAL.test(replicas) || !Number.isInteger(count)) {
    return { replicas: 'must be a whole number' };
  }
  if (count < REPLICAS_MIN) return { replicas: `must be at least ${REPLICAS_MIN}` };
  if (count > REPLICAS_MAX) return { replicas: `must be at most ${REPLICAS_MAX}` };
  return {};
}

/**
 * The body of a create or update: an empty field is null (unset, or back to its default), the
 * name as typed, `replicas` a number. Send it only when sourceProblems finds none.
 */
export function sourceBody(form: SourceForm) {
  const orNull = (value: string) => (value.trim() === '' ? null : value);
  const replicas = orNull(form.replicas);
  return {
    name: form.name,
    repository: orNull(form.repository),
    branch: orNull(form.branch),
    rootDirectory: orNull(form.rootDirectory),
    buildCommand: orNull(form.buildCommand),
    startCommand: orNull(form.startCommand),
    healthCheckPath: orNull(form.healthCheckPath),
    replicas: replicas === null ? null : Number(replicas),
    dockerfilePath: orNull(form.dockerfilePath),
  };
}

export type SourceBody = ReturnType<typeof sourceBody>;
