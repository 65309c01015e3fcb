import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useLocation } from 'wouter';
import { api, call, type Schemas } from '../api/client';
import { ErrorNotice, ErrorView } from '../components/ErrorView';
import { SourceFields } from '../components/SourceFields';
import { StatusBadge } from '../components/Status';
import { fieldErrorsOf } from '../lib/forms';
import { emptySource, sourceBody } from '../lib/service-form';

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
    <section className="panel" aria-labelledby="services-title">
      <h2 id="services-title">Services</h2>
      {services.isPending && <p role="status">Loading services…</p>}
      {services.isError && <ErrorView error={services.error} retry={() => services.refetch()} />}
      {services.isSuccess && services.data.services.length === 0 && <p>No services yet.</p>}
      <ul className="rows" aria-label="Services">
        {services.data?.services.map((service) => (
          <ServiceRow key={service.id} service={service} />
        ))}
      </ul>
      <CreateService projectId={projectId} />
    </section>
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
  const [form, setForm] = useState(emptySource);
  const create = useMutation({
    mutationFn: () =>
      call(
        api.POST('/api/projects/{projectId}/services', {
          params: { path: { projectId } },
          body: sourceBody(form),
        }),
      ),
    onSuccess: (service) => {
      void queryClient.invalidateQueries({ queryKey: ['services', projectId] });
      navigate(`/projects/${projectId}/services/${service.id}`);
    },
  });
  const { fields, rest } = fieldErrorsOf(create.error, 'name');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  return (
    <details className="create">
      <summary>New service</summary>
      <form onSubmit={submit} aria-label="New service">
        <SourceFields form={form} errors={fields} onChange={setForm} />
        <button type="submit" className="primary" disabled={create.isPending}>
          Create service
        </button>
        <ErrorNotice error={rest} />
      </form>
    </details>
  );
}
