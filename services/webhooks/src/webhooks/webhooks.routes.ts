import { Router } from 'express';
import { projectIdOf } from '../projects/project-access';
import { accountIdOf, listQuery, validate } from '@platform/shared';
import type { DeliveriesService } from '../deliveries/deliveries.service';
import { noInputBody } from '../deliveries/deliveries.schemas';
import type { WebhooksService } from './webhooks.service';
import { createWebhookBody, updateWebhookBody, webhookView } from './webhooks.schemas';

/** Mounted at /api/projects/:projectId/webhooks, after requireProjectAccess. */
export function webhooksRouter(webhooks: WebhooksService, deliveries: DeliveriesService): Router {
  const router = Router({ mergeParams: true });

  router.post('/', async (req, res) => {
    const input = validate(createWebhookBody, req.body);
    const webhook = await webhooks.createWebhook(accountIdOf(req), projectIdOf(req), input);
    res.status(201).json(webhookView(webhook, { withSecret: true }));
  });

  router.get('/', async (req, res) => {
    // Without `limit`, every webhook of the project (bounded by the per-project quota).
    const page = await webhooks.listWebhooks(projectIdOf(req), validate(listQuery, req.query));
    res.json({ webhooks: page.items.map((w) => webhookView(w)), ...cursorOf(page) });
  });

  router.get('/:webhookId', async (req, res) => {
    res.json(webhookView(await webhooks.getWebhook(projectIdOf(req), req.params.webhookId)));
  });

  router.patch('/:webhookId', async (req, res) => {
    const input = validate(updateWebhookBody, req.body);
    const webhook = await webhooks.updateWebhook(projectIdOf(req), req.params.webhookId, input);
    res.json(webhookView(webhook, { withSecret: input.rotateSecret === true }));
  });

  router.delete('/:webhookId', async (req, res) => {
    await webhooks.deleteWebhook(projectIdOf(req), req.params.webhookId);
    res.status(204).end();
  });

  router.post('/:webhookId/test', async (req, res) => {
    validate(noInputBody, req.body);
    const webhook = await webhooks.getWebhook(projectIdOf(req), req.params.webhookId);
    await deliveries.sendTestEvent(webhook);
    res.status(202).end();
  });

  return router;
}

export const cursorOf = (page: { nextCursor?: string }) =>
  page.nextCursor ? { nextCursor: page.nextCursor } : {};
