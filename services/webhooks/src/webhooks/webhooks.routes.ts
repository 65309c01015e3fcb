import { Router } from 'express';
import { listQuery, listResponse, ownedOf, validate } from '@platform/shared';
import type { DeliveriesService } from '../deliveries/deliveries.service';
import { noInputBody } from '../deliveries/deliveries.schemas';
import type { WebhooksService } from './webhooks.service';
import { createWebhookBody, updateWebhookBody, webhookView } from './webhooks.schemas';

/** Mounted at /api/projects/:projectId/webhooks, after requireOwnership(projects, 'project'). */
export function webhooksRouter(webhooks: WebhooksService, deliveries: DeliveriesService): Router {
  const router = Router({ mergeParams: true });

  router.post('/', async (req, res) => {
    const input = validate(createWebhookBody, req.body);
    const { accountId, projectId } = ownedOf(req);
    const { webhook, secret } = await webhooks.createWebhook(accountId, projectId, input);
    res.status(201).json(webhookView(webhook, secret));
  });

  router.get('/', async (req, res) => {
    // Without `limit`, every webhook of the project (bounded by the per-project quota).
    const page = await webhooks.listWebhooks(
      ownedOf(req).projectId,
      validate(listQuery, req.query),
    );
    res.json(listResponse('webhooks', page, (webhook) => webhookView(webhook)));
  });

  router.get('/:webhookId', async (req, res) => {
    res.json(webhookView(await webhooks.getWebhook(ownedOf(req).projectId, req.params.webhookId)));
  });

  router.patch('/:webhookId', async (req, res) => {
    const input = validate(updateWebhookBody, req.body);
    const { webhook, secret } = await webhooks.updateWebhook(
      ownedOf(req).projectId,
      req.params.webhookId,
      input,
    );
    res.json(webhookView(webhook, secret));
  });

  router.delete('/:webhookId', async (req, res) => {
    await webhooks.deleteWebhook(ownedOf(req).projectId, req.params.webhookId);
    res.status(204).end();
  });

  router.post('/:webhookId/test', async (req, res) => {
    validate(noInputBody, req.body);
    const webhook = await webhooks.getWebhook(ownedOf(req).projectId, req.params.webhookId);
    await deliveries.sendTestEvent(webhook);
    res.status(202).end();
  });

  return router;
}
