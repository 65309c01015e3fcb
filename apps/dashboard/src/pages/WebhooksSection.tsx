import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'wouter';
import { api, call, type Schemas } from '../api/client';
import { ErrorNotice } from '../components/ErrorView';
import { Field } from '../components/Field';
import { ListPanel } from '../components/ListPanel';
import { SecretOnce } from '../components/SecretOnce';
import { formOf, useTextFields } from '../lib/forms';

export const webhooksQuery = (projectId: string) => ({
  queryKey: ['webhooks', projectId],
  queryFn: () =>
    call(api.GET('/api/projects/{projectId}/webhooks', { params: { path: { projectId } } })),
});

/** A project's webhooks; a new one shows its secret once. */
export function WebhooksSection({ projectId }: { projectId: string }) {
  const webhooks = useQuery(webhooksQuery(projectId));
  return (
    <ListPanel
      title="Webhooks"
      query={webhooks}
      items={webhooks.data?.webhooks}
      after={<CreateWebhook projectId={projectId} />}
    >
      {(webhook) => (
        <li key={webhook.id}>
          <Link href={`/projects/${projectId}/webhooks/${webhook.id}`}>{webhook.url}</Link>
          <span className="hint">{webhook.enabled ? 'enabled' : 'disabled'}</span>
        </li>
      )}
    </ListPanel>
  );
}

function CreateWebhook({ projectId }: { projectId: string }) {
  const queryClient = useQueryClient();
  const { values, bind, reset } = useTextFields({ url: '' });
  const [created, setCreated] = useState<Schemas['WebhookWithSecret'] | null>(null);
  const create = useMutation({
    mutationFn: () =>
      call(
        api.POST('/api/projects/{projectId}/webhooks', {
          params: { path: { projectId } },
          body: { url: values.url, events: ['deployment.status_changed'] },
        }),
      ),
    onSuccess: (webhook) => {
      setCreated(webhook);
      reset();
      void queryClient.invalidateQueries({ queryKey: ['webhooks', projectId] });
    },
  });
  const { fields, rest, submit } = formOf(create, () => create.mutate(), 'url');
  return (
    <form onSubmit={submit} aria-label="New webhook">
      <Field
        label="Webhook URL"
        type="url"
        required
        hint="Receives deployment.status_changed events"
        {...bind('url', fields)}
      />
      <button type="submit" disabled={create.isPending}>
        Create webhook
      </button>
      <ErrorNotice error={rest} />
      {created && <SecretOnce secret={created.secret} />}
    </form>
  );
}
