import type { SourceForm } from '../lib/service-form';
import { Field, TextArea } from './Field';

/** The settings in the order the form shows them; `rows`: a text area of that many rows. */
const FIELDS: {
  key: keyof SourceForm;
  label: string;
  hint?: string;
  rows?: number;
  required?: boolean;
  maxLength?: number;
}[] = [
  { key: 'name', label: 'Service name', required: true, maxLength: 100 },
  {
    key: 'repository',
    label: 'Git repository',
    hint: 'https://host/owner/repo.git (locally also file:///path)',
  },
  { key: 'branch', label: 'Branch', hint: 'Default: main' },
  {
    key: 'rootDirectory',
    label: 'Root directory',
    hint: "Relative to the repository's root; empty: the root",
  },
  { key: 'buildCommand', label: 'Build command', rows: 2 },
  { key: 'startCommand', label: 'Start command', hint: 'Must listen on $PORT', rows: 2 },
  { key: 'healthCheckPath', label: 'Health check path', hint: 'Default: /' },
];

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
  return (
    <>
      {FIELDS.map(({ key, rows, ...field }) => {
        const props = {
          ...field,
          value: form[key],
          error: errors[key],
          onChange: (e: { target: { value: string } }) =>
            onChange({ ...form, [key]: e.target.value }),
        };
        return rows ? (
          <TextArea key={key} rows={rows} {...props} />
        ) : (
          <Field key={key} {...props} />
        );
      })}
    </>
  );
}
