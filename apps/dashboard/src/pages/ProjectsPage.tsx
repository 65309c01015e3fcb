import { useInfiniteQuery, useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useLocation } from 'wouter';
import { api, call } from '../api/client';
import { ErrorNotice, ErrorView } from '../components/ErrorView';
import { ProjectFields } from '../components/ProjectFields';
import { formatTime } from '../lib/format';
import { fieldErrorsOf, useTitle } from '../lib/forms';

const PAGE = 20;

/** The person's projects, newest first, a page at a time; and a new one. */
export function ProjectsPage() {
  useTitle('Projects');
  const projects = useInfiniteQuery({
    queryKey: ['projects'],
    queryFn: ({ pageParam }) =>
      call(api.GET('/api/projects', { params: { query: { limit: PAGE, cursor: pageParam } } })),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor,
  });
  const list = projects.data?.pages.flatMap((page) => page.projects) ?? [];

  return (
    <>
      <h1>Projects</h1>
      <CreateProject />
      <section aria-labelledby="list-title" className="panel">
        <h2 id="list-title">Your projects</h2>
        {projects.isPending && <p role="status">Loading projects…</p>}
        {projects.isError && <ErrorView error={projects.error} retry={() => projects.refetch()} />}
        {projects.isSuccess && list.length === 0 && <p>No projects yet: create one above.</p>}
        <ul className="rows" aria-label="Projects">
          {list.map((project) => (
            <li key={project.id}>
              <Link href={`/projects/${project.id}`}>{project.name}</Link>
              <span className="hint">created {formatTime(project.createdAt)}</span>
            </li>
          ))}
        </ul>
        {projects.hasNextPage && (
          <button
            type="button"
            onClick={() => projects.fetchNextPage()}
            disabled={projects.isFetchingNextPage}
          >
            {projects.isFetchingNextPage ? 'Loading…' : 'Show more projects'}
          </button>
        )}
      </section>
    </>
  );
}

function CreateProject() {
  const queryClient = useQueryClient();
  const [, navigate] = useLocation();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const create = useMutation({
    mutationFn: () => call(api.POST('/api/projects', { body: { name, description } })),
    onSuccess: (project) => {
      void queryClient.invalidateQueries({ queryKey: ['projects'] });
      navigate(`/projects/${project.id}`);
    },
  });
  const { fields, rest } = fieldErrorsOf(create.error, 'name');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  return (
    <form className="panel" onSubmit={submit} aria-labelledby="create-project-title">
      <h2 id="create-project-title">New project</h2>
      <ProjectFields
        name={name}
        description={description}
        errors={fields}
        onName={setName}
        onDescription={setDescription}
        rows={2}
      />
      <button type="submit" className="primary" disabled={create.isPending}>
        Create project
      </button>
      <ErrorNotice error={rest} />
    </form>
  );
}
