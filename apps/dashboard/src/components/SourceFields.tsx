import { useState } from 'react';
import { formOf } from '../lib/forms';
import {
  REPLICAS_MAX,
  REPLICAS_MIN,
  sourceBody,
  type SourceBody,
  sourceProblems,
  type SourceForm,
} from '../lib/service-form';
import { Field, TextArea } from './Field';

/** The settings in the order the form shows them; `rows`: a text area of that many rows. */
const FIELDS: {
  key: keyof SourceForm;
  label: string;
  hint?: string;
  rows?: number;
  required?: boolean;
  maxLength?: number;
  inputMode?: 'numeric';
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
  {
    key: 'dockerfilePath',
    label: 'Dockerfile path',
    hint: "Relative to the repository's root; set, the Dockerfile is the build (the Kubernetes runtime only)",
  },
  { key: 'startCommand', label: 'Start command', hint: 'Must listen on $PORT', rows: 2 },
  { key: 'healthCheckPath', label: 'Health check path', hint: 'Default: /' },
  {
    // Text, not type=number: the browser's own check would block the submit with a bubble
    // instead of the form's words, and would read "abc" as empty (the default).
    key: 'replicas',
    label: 'Replicas',
    hint: `Copies serving the URL: a whole number from ${REPLICAS_MIN} to ${REPLICAS_MAX}. Default: 1`,
    inputMode: 'numeric',
  },
];

/**
 * A service form's values, and its submit: the form's own check first (sourceProblems), and only
 * when it finds nothing the body to `mutation`. `errors`: the check's per field, or the API's
 * (a 409 is the name's).
 */
export function useSourceForm(
  initial: SourceForm | (() => SourceForm),
  mutation: {
    error: unknown;
    mutate: (body: SourceBody) => void;
    reset: () => void;
  },
) {
  const [form, setForm] = useState(initial);
  const [problems, setProblems] = useState<Record<string, string>>({});
  const { fields, rest, submit } = formOf(
    mutation,
    () => {
      const found = sourceProblems(form);
      setProblems(found);
      if (Object.keys(found).length === 0) mutation.mutate(sourceBody(form));
      // An earlier answer (its errors, "Saved") is not about what the form holds now.
      else mutation.reset();
    },
    'name',
  );
  return { form, setForm, errors: { ...fields, ...problems }, rest, submit };
}

/** A service's name and source settings, each with its error under it. */
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
