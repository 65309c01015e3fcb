import { useId, type ReactNode } from 'react';
import { formOf, useTextFields } from '../lib/forms';
import { ErrorNotice } from './ErrorView';
import { Field, TextArea } from './Field';

export interface ProjectBody {
  name: string;
  description: string;
}

/**
 * A project's name and description as a panel form, each field with the API's error under it;
 * submitting sends them to `mutation` (a 409 is the name's).
 */
export function ProjectForm({
  title,
  initial = { name: '', description: '' },
  rows,
  submitLabel,
  primary,
  mutation,
  children,
}: {
  title: string;
  initial?: ProjectBody;
  rows: number;
  submitLabel: string;
  primary?: boolean;
  mutation: { isPending: boolean; error: unknown; mutate: (body: ProjectBody) => void };
  /** Shown after the button (a status). */
  children?: ReactNode;
}) {
  const titleId = useId();
  const { values, bind } = useTextFields({
    name: initial.name,
    description: initial.description,
  });
  const { fields, rest, submit } = formOf(mutation, () => mutation.mutate(values), 'name');
  return (
    <form className="panel" onSubmit={submit} aria-labelledby={titleId}>
      <h2 id={titleId}>{title}</h2>
      <Field label="Project name" required maxLength={100} {...bind('name', fields)} />
      <TextArea label="Description" maxLength={2000} rows={rows} {...bind('description', fields)} />
      <button
        type="submit"
        className={primary ? 'primary' : undefined}
        disabled={mutation.isPending}
      >
        {submitLabel}
      </button>
      {children}
      <ErrorNotice error={rest} />
    </form>
  );
}
