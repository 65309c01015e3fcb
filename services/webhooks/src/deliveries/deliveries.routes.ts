import { Router } from 'express';
import { listQuery, listResponse, ownedOf, validate } from '@platform/shared';
import type { WebhooksService } from '../webhooks/webhooks.service';
import type { DeliveriesService } from './deliveries.service';
import {
  DEFAULT_DELIVERY_PAGE,
  deliveryDetail,
  deliverySummary,
  noInputBody,
} from './deliveries.schemas';

/**
 * A webhook's delivery log; mounted at /api/projects/:projectId/webhooks after
 * requireOwnership(projects, 'project').
 */
export function deliveriesRouter(webhooks: WebhooksService, deliveries: DeliveriesService): Router {
  const router = Router({ mergeParams: true });

  router.get('/:webhookId/deliveries', async (req, res) => {
    const query = validate(listQuery, req.query);
    const webhook = await webhooks.getWebhook(ownedOf(req).projectId, req.params.webhookId);
    const page = await deliveries.listDeliveries(webhook, {
      limit: query.limit ?? DEFAULT_DELIVERY_PAGE,
      cursor: query.cursor,
    });
    res.json(listResponse('deliveries', page, deliverySummary));
  });

  router.get('/:webhookId/deliveries/:deliveryId', async (req, res) => {
    const webhook = await webhooks.getWebhook(ownedOf(req).projectId, req.params.webhookId);
    res.json(deliveryDetail(await deliveries.getDelivery(webhook, req.params.deliveryId)));
  });

  router.post('/:webhookId/deliveries/:deliveryId/redeliver', async (req, res) => {
    validate(noInputBody, req.body);
    const webhook = await webhooks.getWebhook(ownedOf(req).projectId, req.params.webhookId);
    await deliveries.redeliver(webhook, req.params.deliveryId);
    res.status(202).end();
  });

  return router;
}
