import { useInfiniteQuery, useMutation, useQueryClient } from '@tanstack/react-query';
import { Link, useLocation } from 'wouter';
import { api, call } from '../api/client';
import { ListPanel, MoreButton } from '../components/ListPanel';
import { ProjectForm, type ProjectBody } from '../components/ProjectForm';
import { formatTime } from '../lib/format';
import { useTitle } from '../lib/forms';

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
      <ListPanel
        title="Your projects"
        label="Projects"
        query={projects}
        items={list}
        loading="Loading projects…"
        empty="No projects yet: create one above."
        after={<MoreButton pages={projects} label="Show more projects" busyLabel="Loading…" />}
      >
        {(project) => (
          <li key={project.id}>
            <Link href={`/projects/${project.id}`}>{project.name}</Link>
            <span className="hint">created {formatTime(project.createdAt)}</span>
          </li>
        )}
      </ListPanel>
    </>
  );
}

function CreateProject() {
  const queryClient = useQueryClient();
  const [, navigate] = useLocation();
  const create = useMutation({
    mutationFn: (body: ProjectBody) => call(api.POST('/api/projects', { body })),
    onSuccess: (project) => {
      void queryClient.invalidateQueries({ queryKey: ['projects'] });
      navigate(`/projects/${project.id}`);
    },
  });
  return (
    <ProjectForm
      title="New project"
      rows={2}
      submitLabel="Create project"
      primary
      mutation={create}
    />
  );
}
