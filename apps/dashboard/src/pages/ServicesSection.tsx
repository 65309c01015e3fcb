import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useLocation } from 'wouter';
import { api, call, type Schemas } from '../api/client';
import { ErrorNotice } from '../components/ErrorView';
import { ListPanel } from '../components/ListPanel';
import { SourceFields, useSourceForm } from '../components/SourceFields';
import { StatusBadge } from '../components/Status';
import { emptySource, type SourceBody } from '../lib/service-form';

export const servicesQuery = (projectId: string) => ({
  queryKey: ['services', projectId],
  queryFn: () =>
    call(api.GET('/api/projects/{projectId}/services', { params: { path: { projectId } } })),
});

export const latestDeploymentQuery = (projectId: string, serviceId: string) => ({
  queryKey: ['deployments', serviceId, 'latest'],
  queryFn: () =>
    call(
      api.GET('/api/projects/{projectId}/services/{serviceId}/deployments', {
        params: { path: { projectId, serviceId }, query: { limit: 1 } },
      }),
    ),
});

/** A project's services, each with its latest deployment and URL; and a new one. */
export function ServicesSection({ projectId }: { projectId: string }) {
  const services = useQuery(servicesQuery(projectId));
  return (
    <ListPanel
      title="Services"
      query={services}
      items={services.data?.services}
      loading="Loading services…"
      after={<CreateService projectId={projectId} />}
    >
      {(service) => <ServiceRow key={service.id} service={service} />}
    </ListPanel>
  );
}

function ServiceRow({ service }: { service: Schemas['Service'] }) {
  const latest = useQuery(latestDeploymentQuery(service.projectId, service.id));
  const deployment = latest.data?.deployments[0];
  return (
    <li>
      <Link href={`/projects/${service.projectId}/services/${service.id}`}>{service.name}</Link>
      {deployment ? (
        <StatusBadge status={deployment.status} />
      ) : (
        <span className="hint">never deployed</span>
      )}
      {service.url && (
        <a href={service.url} target="_blank" rel="noreferrer">
          {service.url}
        </a>
      )}
    </li>
  );
}

function CreateService({ projectId }: { projectId: string }) {
  const queryClient = useQueryClient();
  const [, navigate] = useLocation();
  const create = useMutation({
    mutationFn: (body: SourceBody) =>
      call(
        api.POST('/api/projects/{projectId}/services', { params: { path: { projectId } }, body }),
      ),
    onSuccess: (service) => {
      void queryClient.invalidateQueries({ queryKey: ['services', projectId] });
      navigate(`/projects/${projectId}/services/${service.id}`);
    },
  });
  const { form, setForm, errors, rest, submit } = useSourceForm(emptySource, create);
  return (
    <details className="create">
      <summary>New service</summary>
      <form onSubmit={submit} aria-label="New service">
        <SourceFields form={form} errors={errors} onChange={setForm} />
        <button type="submit" className="primary" disabled={create.isPending}>
          Create service
        </button>
        <ErrorNotice error={rest} />
      </form>
    </details>
  );
}
