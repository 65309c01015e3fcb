import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useLocation, useParams } from 'wouter';
import { api, call, type Schemas } from '../api/client';
import { ConfirmDelete } from '../components/ConfirmDelete';
import { ErrorNotice, ErrorView } from '../components/ErrorView';
import { ProjectFields } from '../components/ProjectFields';
import { fieldErrorsOf, useTitle } from '../lib/forms';
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
  if (project.isPending) return <p role="status">Loading the project…</p>;
  if (project.isError) return <ErrorView error={project.error} retry={() => project.refetch()} />;
  return (
    <>
      <nav aria-label="Breadcrumb" className="crumbs">
        <Link href="/">Projects</Link>
      </nav>
      <h1>{project.data.name}</h1>
      {project.data.description && <p className="description">{project.data.description}</p>}
      <ServicesSection projectId={projectId} />
      <WebhooksSection projectId={projectId} />
      <ProjectSettings project={project.data} />
      <DeleteProject project={project.data} />
    </>
  );
}

function ProjectSettings({ project }: { project: Schemas['Project'] }) {
  const queryClient = useQueryClient();
  const [name, setName] = useState(project.name);
  const [description, setDescription] = useState(project.description);
  const save = useMutation({
    mutationFn: () =>
      call(
        api.PATCH('/api/projects/{projectId}', {
          params: { path: { projectId: project.id } },
          body: { name, description },
        }),
      ),
    onSuccess: (saved) => {
      queryClient.setQueryData(['project', project.id], saved);
      void queryClient.invalidateQueries({ queryKey: ['projects'] });
    },
  });
  const { fields, rest } = fieldErrorsOf(save.error, 'name');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate();
  };
  return (
    <form className="panel" onSubmit={submit} aria-labelledby="project-settings-title">
      <h2 id="project-settings-title">Project settings</h2>
      <ProjectFields
        name={name}
        description={description}
        errors={fields}
        onName={setName}
        onDescription={setDescription}
        rows={3}
      />
      <button type="submit" disabled={save.isPending}>
        Save project
      </button>
      {save.isSuccess && !save.isPending && (
        <span role="status" className="hint">
          Saved.
        </span>
      )}
      <ErrorNotice error={rest} />
    </form>
  );
}

function DeleteProject({ project }: { project: Schemas['Project'] }) {
  const queryClient = useQueryClient();
  const [, navigate] = useLocation();
  const [confirming, setConfirming] = useState(false);
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
    <section className="panel danger-zone" aria-labelledby="delete-project-title">
      <h2 id="delete-project-title">Delete this project</h2>
      <button type="button" className="danger" onClick={() => setConfirming(true)}>
        Delete project…
      </button>
      <ConfirmDelete
        open={confirming}
        title={`Delete “${project.name}”?`}
        confirmLabel="Delete project and everything in it"
        busy={remove.isPending}
        onConfirm={() => remove.mutate()}
        onCancel={() => setConfirming(false)}
      >
        <p>
          Goes with it: {serviceCount ?? 'its'} service{serviceCount === 1 ? '' : 's'} (their
          deployments, logs and running apps, which stop answering) and {webhookCount ?? 'its'}{' '}
          webhook{webhookCount === 1 ? '' : 's'} with their deliveries. This cannot be undone.
        </p>
        <ErrorNotice error={remove.error} />
      </ConfirmDelete>
    </section>
  );
}
