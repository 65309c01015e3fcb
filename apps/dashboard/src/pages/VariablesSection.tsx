import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, call, type Schemas } from '../api/client';
import { ErrorNotice } from '../components/ErrorView';
import { Field } from '../components/Field';
import { ListPanel } from '../components/ListPanel';
import { formOf, useTextFields } from '../lib/forms';
import type { ServiceParams } from './service-params';

export const variablesQuery = (params: ServiceParams) => ({
  queryKey: ['variables', params.serviceId],
  queryFn: () =>
    call(
      api.GET('/api/projects/{projectId}/services/{serviceId}/variables', {
        params: { path: params },
      }),
    ),
});

/** A service's variables: plain ones with their values, secret ones never shown after saving. */
export function VariablesSection({ params }: { params: ServiceParams }) {
  const variables = useQuery(variablesQuery(params));
  return (
    <ListPanel
      title="Variables"
      query={variables}
      items={variables.data?.variables}
      after={<VariableForm params={params} />}
    >
      {(variable) => <VariableRow key={variable.name} params={params} variable={variable} />}
    </ListPanel>
  );
}

function useSaveVariable(params: ServiceParams) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (v: { name: string; value: string; secret: boolean }) =>
      call(
        api.PUT('/api/projects/{projectId}/services/{serviceId}/variables/{name}', {
          params: { path: { ...params, name: v.name } },
          body: { value: v.value, secret: v.secret },
        }),
      ),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: variablesQuery(params).queryKey }),
  });
}

function VariableRow({
  params,
  variable,
}: {
  params: ServiceParams;
  variable: Schemas['Variable'];
}) {
  const queryClient = useQueryClient();
  const [editing, setEditing] = useState(false);
  const { values, bind } = useTextFields({ value: '' });
  const [secret, setSecret] = useState(variable.secret);
  const save = useSaveVariable(params);
  const remove = useMutation({
    mutationFn: () =>
      call(
        api.DELETE('/api/projects/{projectId}/services/{serviceId}/variables/{name}', {
          params: { path: { ...params, name: variable.name } },
        }),
      ),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: variablesQuery(params).queryKey }),
  });
  const { submit } = formOf(save, () =>
    save.mutate(
      { name: variable.name, value: values.value, secret },
      { onSuccess: () => setEditing(false) },
    ),
  );
  return (
    <li className="variable">
      <code>{variable.name}</code>
      {variable.secret ? (
        <span className="badge">secret · hidden</span>
      ) : (
        <code className="value">{variable.value}</code>
      )}
      <button type="button" aria-expanded={editing} onClick={() => setEditing(!editing)}>
        Change <span className="sr-only">{variable.name}</span>
      </button>
      <button
        type="button"
        className="danger"
        disabled={remove.isPending}
        onClick={() => remove.mutate()}
      >
        Delete <span className="sr-only">{variable.name}</span>
      </button>
      {editing && (
        <form onSubmit={submit} aria-label={`Change ${variable.name}`} className="inline">
          <Field label={`New value of ${variable.name}`} {...bind('value')} />
          <SecretToggle checked={secret} onChange={setSecret} />
          <button type="submit" disabled={save.isPending}>
            Save {variable.name}
          </button>
        </form>
      )}
      <ErrorNotice error={save.error ?? remove.error} />
    </li>
  );
}

function SecretToggle({ checked, onChange }: { checked: boolean; onChange: (v: boolean) => void }) {
  return (
    <label className="checkbox">
      <input type="checkbox" checked={checked} onChange={(e) => onChange(e.target.checked)} />{' '}
      Secret (never shown again, masked in logs)
    </label>
  );
}

function VariableForm({ params }: { params: ServiceParams }) {
  const { values, bind, reset } = useTextFields({ name: '', value: '' });
  const [secret, setSecret] = useState(false);
  const save = useSaveVariable(params);
  const { fields, rest, submit } = formOf(save, () =>
    save.mutate(
      { ...values, secret },
      {
        onSuccess: () => {
          reset();
          setSecret(false);
        },
      },
    ),
  );
  // A bad name is a path parameter: the API names the field `name`.
  return (
    <form onSubmit={submit} aria-label="Add a variable" className="inline">
      <Field
        label="Variable name"
        required
        pattern="[A-Z_][A-Z0-9_]*"
        hint="Upper case, digits and _"
        {...bind('name', fields)}
      />
      <Field label="Value" {...bind('value', fields)} />
      <SecretToggle checked={secret} onChange={setSecret} />
      <button type="submit" disabled={save.isPending}>
        Add variable
      </button>
      <ErrorNotice error={rest} />
    </form>
  );
}
