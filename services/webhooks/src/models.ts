import type { Connection } from 'mongoose';
import { deliveryModel } from './deliveries/deliveries.model';
import { webhookModel, webhookQuotaModel } from './webhooks/webhooks.model';

/** The service's models on one connection; compose creates their indexes (syncIndexes). */
export const createModels = (connection: Connection) => ({
  webhooks: webhookModel(connection),
  webhookQuotas: webhookQuotaModel(connection),
  deliveries: deliveryModel(connection),
});

export type Models = ReturnType<typeof createModels>;
