import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useLocation, useParams } from 'wouter';
import { api, call, type Schemas } from '../api/client';
import { Breadcrumbs } from '../components/Breadcrumbs';
import { DeleteSection } from '../components/DeleteSection';
import { Loaded } from '../components/Loaded';
import { ProjectForm, type ProjectBody } from '../components/ProjectForm';
import { useTitle } from '../lib/forms';
import { ServicesSection, servicesQuery } from './ServicesSection';
import { WebhooksSection, webhooksQuery } from './WebhooksSection';

export const projectQuery = (projectId: string) => ({
  queryKey: ['project', projectId],
  queryFn: () => call(api.GET('/api/projects/{projectId}', { params: { path: { projectId } } })),
});

/** A project: its settings, services and webhooks; delete it with all that goes with it. */
export function ProjectPage() {
  const { projectId } = useParams<{ projectId: string }>();
  const project = useQuery(projectQuery(projectId));
  useTitle(project.data?.name);
  return (
    <Loaded query={project} loading="Loading the project…">
      {(data) => (
        <>
          <Breadcrumbs />
          <h1>{data.name}</h1>
          {data.description && <p className="description">{data.description}</p>}
          <ServicesSection projectId={projectId} />
          <WebhooksSection projectId={projectId} />
          <ProjectSettings project={data} />
          <DeleteProject project={data} />
        </>
      )}
    </Loaded>
  );
}

function ProjectSettings({ project }: { project: Schemas['Project'] }) {
  const queryClient = useQueryClient();
  const save = useMutation({
    mutationFn: (body: ProjectBody) =>
      call(
        api.PATCH('/api/projects/{projectId}', {
          params: { path: { projectId: project.id } },
          body,
        }),
      ),
    onSuccess: (saved) => {
      queryClient.setQueryData(['project', project.id], saved);
      void queryClient.invalidateQueries({ queryKey: ['projects'] });
    },
  });
  return (
    <ProjectForm
      title="Project settings"
      initial={project}
      rows={3}
      submitLabel="Save project"
      mutation={save}
    >
      {save.isSuccess && !save.isPending && (
        <span role="status" className="hint">
          Saved.
        </span>
      )}
    </ProjectForm>
  );
}

function DeleteProject({ project }: { project: Schemas['Project'] }) {
  const queryClient = useQueryClient();
  const [, navigate] = useLocation();
  const services = useQuery(servicesQuery(project.id));
  const webhooks = useQuery(webhooksQuery(project.id));
  const remove = useMutation({
    mutationFn: () =>
      call(
        api.DELETE('/api/projects/{projectId}', { params: { path: { projectId: project.id } } }),
      ),
    onSuccess: () => {
      queryClient.removeQueries({ queryKey: ['project', project.id] });
      void queryClient.invalidateQueries({ queryKey: ['projects'] });
      navigate('/', { replace: true });
    },
  });
  const serviceCount = services.data?.services.length;
  const webhookCount = webhooks.data?.webhooks.length;
  return (
    <DeleteSection
      heading="Delete this project"
      openLabel="Delete project…"
      title={`Delete “${project.name}”?`}
      confirmLabel="Delete project and everything in it"
      remove={remove}
    >
      <p>
        Goes with it: {serviceCount ?? 'its'} service{serviceCount === 1 ? '' : 's'} (their
        deployments, logs and running apps, which stop answering) and {webhookCount ?? 'its'}{' '}
        webhook{webhookCount === 1 ? '' : 's'} with their deliveries. This cannot be undone.
      </p>
    </DeleteSection>
  );
}
