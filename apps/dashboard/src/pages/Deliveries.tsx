import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, call, type Schemas } from '../api/client';
import { ErrorNotice, ErrorView } from '../components/ErrorView';
import { ListPanel } from '../components/ListPanel';
import { formatTime } from '../lib/format';

type Params = { projectId: string; webhookId: string };

/** A webhook's deliveries, newest first, refreshed while any is pending; each one's attempts. */
export function Deliveries({ params }: { params: Params }) {
  const deliveries = useQuery({
    queryKey: ['deliveries', params.webhookId],
    queryFn: () =>
      call(
        api.GET('/api/projects/{projectId}/webhooks/{webhookId}/deliveries', {
          params: { path: params, query: { limit: 20 } },
        }),
      ),
    refetchInterval: (query) =>
      query.state.data?.deliveries.some((d) => d.status === 'pending') ? 1_000 : 5_000,
  });
  return (
    <ListPanel title="Deliveries" query={deliveries} items={deliveries.data?.deliveries}>
      {(delivery) => <Delivery key={delivery.id} params={params} delivery={delivery} />}
    </ListPanel>
  );
}

function Delivery({ params, delivery }: { params: Params; delivery: Schemas['Delivery'] }) {
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);
  const path = { ...params, deliveryId: delivery.id };
  const detail = useQuery({
    queryKey: ['delivery', delivery.id, delivery.attempts, delivery.status],
    queryFn: () =>
      call(
        api.GET('/api/projects/{projectId}/webhooks/{webhookId}/deliveries/{deliveryId}', {
          params: { path },
        }),
      ),
    enabled: open,
  });
  const redeliver = useMutation({
    mutationFn: () =>
      call(
        api.POST(
          '/api/projects/{projectId}/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver',
          {
            params: { path },
          },
        ),
      ),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['deliveries', params.webhookId] }),
  });
  return (
    <li className="delivery">
      <details onToggle={(e) => setOpen(e.currentTarget.open)}>
        <summary>
          <span className={`badge delivery-${delivery.status}`}>{delivery.status}</span>{' '}
          {delivery.type} · {delivery.attempts} attempt{delivery.attempts === 1 ? '' : 's'}
          {delivery.lastStatusCode !== null && ` · HTTP ${delivery.lastStatusCode}`} ·{' '}
          {formatTime(delivery.createdAt)}
        </summary>
        {detail.isError && <ErrorView error={detail.error} retry={() => detail.refetch()} />}
        {detail.data && (
          <ol className="attempts" aria-label="Attempts">
            {detail.data.attemptLog.map((attempt) => (
              <li key={attempt.at}>
                {formatTime(attempt.at)}:{' '}
                {attempt.statusCode === null ? 'no answer' : `HTTP ${attempt.statusCode}`} in{' '}
                {Math.round(attempt.durationMs)} ms{attempt.error && ` (${attempt.error})`}
                {attempt.responseExcerpt && (
                  <pre className="excerpt">{attempt.responseExcerpt}</pre>
                )}
              </li>
            ))}
          </ol>
        )}
        <button type="button" disabled={redeliver.isPending} onClick={() => redeliver.mutate()}>
          Redeliver
        </button>
        <ErrorNotice error={redeliver.error} />
      </details>
    </li>
  );
}
