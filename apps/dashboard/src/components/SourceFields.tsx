import type { SourceForm } from '../lib/service-form';
import { Field, TextArea } from './Field';

/** A service's name and source settings, each with the API's error under it. */
export function SourceFields({
  form,
  errors,
  onChange,
}: {
  form: SourceForm;
  errors: Record<string, string>;
  onChange: (form: SourceForm) => void;
}) {
  const set = (key: keyof SourceForm) => (e: { target: { value: string } }) =>
    onChange({ ...form, [key]: e.target.value });
  return (
    <>
      <Field
        label="Service name"
        required
        maxLength={100}
        value={form.name}
        error={errors.name}
        onChange={set('name')}
      />
      <Field
        label="Git repository"
        hint="https://host/owner/repo.git (locally also file:///path)"
        value={form.repository}
        error={errors.repository}
        onChange={set('repository')}
      />
      <Field
        label="Branch"
        hint="Default: main"
        value={form.branch}
        error={errors.branch}
        onChange={set('branch')}
      />
      <Field
        label="Root directory"
        hint="Relative to the repository's root; empty: the root"
        value={form.rootDirectory}
        error={errors.rootDirectory}
        onChange={set('rootDirectory')}
      />
      <TextArea
        label="Build command"
        rows={2}
        value={form.buildCommand}
        error={errors.buildCommand}
        onChange={set('buildCommand')}
      />
      <TextArea
        label="Start command"
        hint="Must listen on $PORT"
        rows={2}
        value={form.startCommand}
        error={errors.startCommand}
        onChange={set('startCommand')}
      />
      <Field
        label="Health check path"
        hint="Default: /"
        value={form.healthCheckPath}
        error={errors.healthCheckPath}
        onChange={set('healthCheckPath')}
      />
    </>
  );
}
