import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { useParams } from 'wouter';
import { api, call, type Schemas } from '../api/client';
import { Breadcrumbs } from '../components/Breadcrumbs';
import { DeploymentActions } from '../components/DeploymentActions';
import { Loaded } from '../components/Loaded';
import { LogView } from '../components/LogView';
import { StatusBadge, isFinal, type DeploymentStatus } from '../components/Status';
import { formatTime, shortHash } from '../lib/format';
import { useTitle } from '../lib/forms';
import { useLogStream } from '../lib/log-stream';

type Params = { projectId: string; serviceId: string; deploymentId: string };

const STREAM_STATE = {
  connecting: 'Connecting to the log…',
  open: 'Following the log live.',
  reconnecting: 'Connection lost: reconnecting, continuing where it stopped…',
  ended: 'The deployment has finished.',
  failed: 'The log stream stopped. Reload the page to follow it again.',
};

/** A deployment: its status and times, and its log following live until the final status. */
export function DeploymentPage() {
  const params = useParams<Params>();
  const queryClient = useQueryClient();
  const deployment = useQuery({
    queryKey: ['deployment', params.deploymentId],
    queryFn: () =>
      call(
        api.GET('/api/projects/{projectId}/services/{serviceId}/deployments/{deploymentId}', {
          params: { path: params },
        }),
      ),
  });
  const base = `/api/projects/${params.projectId}/services/${params.serviceId}/deployments/${params.deploymentId}`;
  const log = useLogStream(`${base}/logs`);
  useTitle(deployment.data ? `Deployment ${shortHash(deployment.data.commitHash)}` : undefined);

  // Every status change the stream reports, and a stream the browser gave up on (a reconnect
  // answered 204 because the deployment ended meanwhile): the deployment as the API has it now.
  const streamGone = log.state === 'failed';
  useEffect(() => {
    if (log.status || streamGone)
      void queryClient.invalidateQueries({ queryKey: ['deployment', params.deploymentId] });
  }, [log.status, streamGone, params.deploymentId, queryClient]);

  return (
    <Loaded query={deployment} loading="Loading the deployment…">
      {(d) => (
        <Deployment
          params={params}
          d={d}
          status={streamGone ? d.status : (log.status ?? d.status)}
          log={log}
        />
      )}
    </Loaded>
  );
}

function Deployment({
  params,
  d,
  status,
  log,
}: {
  params: Params;
  d: Schemas['Deployment'];
  status: DeploymentStatus;
  log: ReturnType<typeof useLogStream>;
}) {
  return (
    <>
      <Breadcrumbs {...params} />
      <h1>
        Deployment <code>{shortHash(d.commitHash)}</code>
      </h1>
      <dl className="facts">
        <dt>Status</dt>
        <dd aria-live="polite" id="deployment-status">
          <StatusBadge status={status} />
        </dd>
        <dt>Commit</dt>
        <dd>
          <code>{d.commitHash}</code> {d.commitMessage}
        </dd>
        <dt>Created</dt>
        <dd>{formatTime(d.createdAt)}</dd>
        <dt>Deployed</dt>
        <dd>{formatTime(d.deployedAt)}</dd>
      </dl>
      <DeploymentActions
        path={params}
        status={status}
        reachedDeployed={d.deployedAt !== undefined}
        label={`deployment ${shortHash(d.commitHash)}`}
      />
      <section className="panel" aria-labelledby="log-title">
        <h2 id="log-title">Log</h2>
        <p role="status" className="hint">
          {log.state === 'failed' && isFinal(d.status)
            ? STREAM_STATE.ended
            : STREAM_STATE[log.state]}
        </p>
        <LogView lines={log.lines} label="Deployment log" />
      </section>
    </>
  );
}
