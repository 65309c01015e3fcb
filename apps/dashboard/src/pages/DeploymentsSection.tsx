import { useInfiniteQuery, useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useLocation } from 'wouter';
import { api, call, idempotencyKey } from '../api/client';
import { DeploymentActions } from '../components/DeploymentActions';
import { ErrorNotice } from '../components/ErrorView';
import { Field } from '../components/Field';
import { ListPanel, MoreButton } from '../components/ListPanel';
import { FINAL_STATUSES, StatusBadge, isFinal, type DeploymentStatus } from '../components/Status';
import { formatTime, shortHash } from '../lib/format';
import { formOf, useTextFields } from '../lib/forms';
import type { ServiceParams } from './service-params';

const ALL: DeploymentStatus[] = ['BUILDING', 'DEPLOYING', ...FINAL_STATUSES];

/** A service's deployments, newest first, filtered by status, refreshed while any is running. */
export function DeploymentsSection({ params }: { params: ServiceParams }) {
  const [statuses, setStatuses] = useState<DeploymentStatus[]>([]);
  const status = statuses.length > 0 ? statuses.join(',') : undefined;
  const deployments = useInfiniteQuery({
    queryKey: ['deployments', params.serviceId, 'list', status],
    queryFn: ({ pageParam }) =>
      call(
        api.GET('/api/projects/{projectId}/services/{serviceId}/deployments', {
          params: { path: params, query: { limit: 20, cursor: pageParam, status } },
        }),
      ),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor,
    refetchInterval: (query) =>
      query.state.data?.pages.some((p) => p.deployments.some((d) => !isFinal(d.status)))
        ? 1_000
        : 5_000,
  });
  const list = deployments.data?.pages.flatMap((page) => page.deployments) ?? [];
  const toggle = (s: DeploymentStatus) =>
    setStatuses((now) => (now.includes(s) ? now.filter((x) => x !== s) : [...now, s]));

  return (
    <ListPanel
      title="Deployments"
      query={deployments}
      items={list}
      empty={`No deployments${status ? ' in these statuses' : ''}.`}
      live
      before={
        <>
          <DeployForm params={params} />
          <fieldset className="filter">
            <legend>Show only</legend>
            {ALL.map((s) => (
              <label key={s} className="checkbox">
                <input type="checkbox" checked={statuses.includes(s)} onChange={() => toggle(s)} />{' '}
                {s}
              </label>
            ))}
          </fieldset>
        </>
      }
      after={<MoreButton pages={deployments} label="Show older deployments" />}
    >
      {(d) => (
        <li key={d.id} className="deployment">
          <StatusBadge status={d.status} />
          <Link
            href={`/projects/${params.projectId}/services/${params.serviceId}/deployments/${d.id}`}
          >
            <code>{shortHash(d.commitHash)}</code> {d.commitMessage || '(no message)'}
          </Link>
          <span className="hint">{formatTime(d.createdAt)}</span>
          <DeploymentActions
            path={{ ...params, deploymentId: d.id }}
            status={d.status}
            reachedDeployed={d.deployedAt !== undefined}
            label={`deployment ${shortHash(d.commitHash)} of ${formatTime(d.createdAt)}`}
          />
        </li>
      )}
    </ListPanel>
  );
}

function DeployForm({ params }: { params: ServiceParams }) {
  const queryClient = useQueryClient();
  const [, navigate] = useLocation();
  const { values, bind } = useTextFields({ commitHash: '', commitMessage: '' });
  const deploy = useMutation({
    mutationFn: () =>
      call(
        api.POST('/api/projects/{projectId}/services/{serviceId}/deployments', {
          params: { path: params },
          body: { commitHash: values.commitHash.trim(), commitMessage: values.commitMessage },
          headers: { 'Idempotency-Key': idempotencyKey() },
        }),
      ),
    onSuccess: (deployment) => {
      void queryClient.invalidateQueries({ queryKey: ['deployments', params.serviceId] });
      navigate(
        `/projects/${params.projectId}/services/${params.serviceId}/deployments/${deployment.id}`,
      );
    },
  });
  const { fields, rest, submit } = formOf(deploy, () => deploy.mutate(), 'commitHash');
  return (
    <form onSubmit={submit} aria-label="Deploy a commit" className="inline">
      <Field
        label="Commit hash"
        required
        pattern="[0-9a-fA-F]{7,64}"
        hint="7 to 64 hexadecimal characters"
        {...bind('commitHash', fields)}
      />
      <Field label="Message (optional)" maxLength={1000} {...bind('commitMessage', fields)} />
      <button type="submit" className="primary" disabled={deploy.isPending}>
        Deploy
      </button>
      <ErrorNotice error={rest} />
    </form>
  );
}
