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
}

export const emptySource: SourceForm = {
  name: '',
  repository: '',
  branch: '',
  rootDirectory: '',
  buildCommand: '',
  startCommand: '',
  healthCheckPath: '',
};

export const sourceFormOf = (service: Schemas['Service']): SourceForm => ({
  name: service.name,
  repository: service.repository ?? '',
  branch: service.branch ?? '',
  rootDirectory: service.rootDirectory ?? '',
  buildCommand: service.buildCommand ?? '',
  startCommand: service.startCommand ?? '',
  healthCheckPath: service.healthCheckPath ?? '',
});

/** The body of a create or update: an empty field is null (unset), the name as typed. */
export function sourceBody(form: SourceForm) {
  const orNull = (value: string) => (value.trim() === '' ? null : value);
  return {
    name: form.name,
    repository: orNull(form.repository),
    branch: orNull(form.branch),
    rootDirectory: orNull(form.rootDirectory),
    buildCommand: orNull(form.buildCommand),
    startCommand: orNull(form.startCommand),
    healthCheckPath: orNull(form.healthCheckPath),
  };
}
