import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useLocation, useParams } from 'wouter';
import { api, call, type Schemas } from '../api/client';
import { Breadcrumbs } from '../components/Breadcrumbs';
import { DeleteSection } from '../components/DeleteSection';
import { ErrorNotice } from '../components/ErrorView';
import { Field } from '../components/Field';
import { Loaded } from '../components/Loaded';
import { SecretOnce } from '../components/SecretOnce';
import { formOf, useTextFields, useTitle } from '../lib/forms';
import { Deliveries } from './Deliveries';

type Params = { projectId: string; webhookId: string };

/** A webhook: edit it, rotate its secret, send a test, its deliveries; delete it. */
export function WebhookPage() {
  const params = useParams<Params>();
  const webhook = useQuery({
    queryKey: ['webhook', params.webhookId],
    queryFn: () =>
      call(api.GET('/api/projects/{projectId}/webhooks/{webhookId}', { params: { path: params } })),
  });
  useTitle(webhook.data ? `Webhook ${webhook.data.url}` : undefined);
  return (
    <Loaded query={webhook} loading="Loading the webhook…">
      {(data) => (
        <>
          <Breadcrumbs projectId={params.projectId} />
          <h1>Webhook</h1>
          <p className="description">{data.url}</p>
          <WebhookSettings params={params} webhook={data} />
          <Deliveries params={params} />
          <DeleteWebhook params={params} />
        </>
      )}
    </Loaded>
  );
}

function WebhookSettings({ params, webhook }: { params: Params; webhook: Schemas['Webhook'] }) {
  const queryClient = useQueryClient();
  const { values, bind } = useTextFields({ url: webhook.url });
  const [enabled, setEnabled] = useState(webhook.enabled);
  const [secret, setSecret] = useState<string | null>(null);
  const update = useMutation({
    mutationFn: (body: Schemas['UpdateWebhook']) =>
      call(
        api.PATCH('/api/projects/{projectId}/webhooks/{webhookId}', {
          params: { path: params },
          body,
        }),
      ),
    onSuccess: (saved) => {
      setSecret('secret' in saved ? saved.secret : null);
      queryClient.setQueryData(['webhook', params.webhookId], saved);
      void queryClient.invalidateQueries({ queryKey: ['webhooks', params.projectId] });
    },
  });
  const test = useMutation({
    mutationFn: () =>
      call(
        api.POST('/api/projects/{projectId}/webhooks/{webhookId}/test', {
          params: { path: params },
        }),
      ),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['deliveries', params.webhookId] }),
  });
  const { fields, rest, submit } = formOf(
    update,
    () => update.mutate({ url: values.url, enabled }),
    'url',
  );
  return (
    <form className="panel" onSubmit={submit} aria-labelledby="webhook-settings-title">
      <h2 id="webhook-settings-title">Settings</h2>
      <Field label="Webhook URL" type="url" required {...bind('url', fields)} />
      <div className="field checkbox">
        <input
          id="webhook-enabled"
          type="checkbox"
          checked={enabled}
          onChange={(e) => setEnabled(e.target.checked)}
        />
        <label htmlFor="webhook-enabled">Enabled</label>
      </div>
      <div className="actions">
        <button type="submit" disabled={update.isPending}>
          Save webhook
        </button>
        <button
          type="button"
          disabled={update.isPending}
          onClick={() => update.mutate({ rotateSecret: true })}
        >
          Rotate secret
        </button>
        <button type="button" disabled={test.isPending} onClick={() => test.mutate()}>
          Send test event
        </button>
      </div>
      {test.isSuccess && (
        <p role="status" className="hint">
          Test event queued: it appears under Deliveries.
        </p>
      )}
      <ErrorNotice error={rest ?? test.error} />
      {secret && <SecretOnce secret={secret} rotated />}
    </form>
  );
}

function DeleteWebhook({ params }: { params: Params }) {
  const queryClient = useQueryClient();
  const [, navigate] = useLocation();
  const remove = useMutation({
    mutationFn: () =>
      call(
        api.DELETE('/api/projects/{projectId}/webhooks/{webhookId}', { params: { path: params } }),
      ),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ['webhooks', params.projectId] });
      navigate(`/projects/${params.projectId}`, { replace: true });
    },
  });
  return (
    <DeleteSection
      heading="Delete this webhook"
      openLabel="Delete webhook…"
      title="Delete this webhook?"
      confirmLabel="Delete webhook"
      remove={remove}
    >
      <p>Its deliveries go with it, and no more events are sent. This cannot be undone.</p>
    </DeleteSection>
  );
}
