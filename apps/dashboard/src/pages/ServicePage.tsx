import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useParams } from 'wouter';
import { api, call, type Schemas } from '../api/client';
import { Breadcrumbs } from '../components/Breadcrumbs';
import { ErrorNotice } from '../components/ErrorView';
import { Loaded } from '../components/Loaded';
import { SourceFields, useSourceForm } from '../components/SourceFields';
import { useTitle } from '../lib/forms';
import { sourceFormOf, type SourceBody } from '../lib/service-form';
import { DeploymentsSection } from './DeploymentsSection';
import { VariablesSection } from './VariablesSection';
import type { ServiceParams } from './service-params';

export const serviceQuery = (params: ServiceParams) => ({
  queryKey: ['service', params.serviceId],
  queryFn: () =>
    call(api.GET('/api/projects/{projectId}/services/{serviceId}', { params: { path: params } })),
});

/** A service: its live URL, deployments, variables and settings. */
export function ServicePage() {
  const params = useParams<ServiceParams>();
  const service = useQuery({ ...serviceQuery(params), refetchInterval: 5_000 });
  useTitle(service.data?.name);
  return (
    <Loaded query={service} loading="Loading the service…">
      {(data) => (
        <>
          <Breadcrumbs projectId={params.projectId} />
          <h1>{data.name}</h1>
          <p className="live-url">
            {data.url ? (
              <>
                Live at{' '}
                <a href={data.url} target="_blank" rel="noreferrer">
                  {data.url}
                </a>
              </>
            ) : (
              'Not live yet: deploy a commit.'
            )}
          </p>
          <DeploymentsSection params={params} />
          <VariablesSection params={params} />
          <ServiceSettings params={params} service={data} />
        </>
      )}
    </Loaded>
  );
}

function ServiceSettings({
  params,
  service,
}: {
  params: ServiceParams;
  service: Schemas['Service'];
}) {
  const queryClient = useQueryClient();
  const save = useMutation({
    mutationFn: (body: SourceBody) =>
      call(
        api.PATCH('/api/projects/{projectId}/services/{serviceId}', {
          params: { path: params },
          body,
        }),
      ),
    onSuccess: (saved) => {
      queryClient.setQueryData(['service', params.serviceId], saved);
      void queryClient.invalidateQueries({ queryKey: ['services', params.projectId] });
    },
  });
  const { form, setForm, errors, rest, submit } = useSourceForm(() => sourceFormOf(service), save);
  return (
    <details className="panel">
      <summary>
        <h2>Settings</h2>
      </summary>
      <form onSubmit={submit} aria-label="Service settings">
        <SourceFields form={form} errors={errors} onChange={setForm} />
        <button type="submit" disabled={save.isPending}>
          Save settings
        </button>
        {save.isSuccess && (
          <span role="status" className="hint">
            Saved: the next deployment uses these settings.
          </span>
        )}
        <ErrorNotice error={rest} />
      </form>
    </details>
  );
}
