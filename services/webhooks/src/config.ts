import { z } from 'zod';
import {
  booleanEnv,
  consumerEnv,
  durationEnv,
  durationListEnv,
  encryptionEnv,
  serviceEnv,
} from '@platform/shared';

export const configSchema = serviceEnv({ port: 4004, database: 'platform_webhooks' })
  .merge(consumerEnv('webhooks'))
  // ENCRYPTION_KEY seals the webhooks' signing secrets at rest (ENCRYPTION_PREVIOUS_KEYS: the
  // older keys that still open them until the housekeeping has sealed them anew).
  .merge(encryptionEnv)
  .extend({
    /** Base URL of the projects service, asked who owns a project. */
    PROJECTS_URL: z.string().url().default('http://127.0.0.1:4002'),
    /** Base URL of the deployments service, asked to confirm a status event before delivering it. */
    DEPLOYMENTS_URL: z.string().url().default('http://127.0.0.1:4003'),
    /** Lets deliveries reach loopback and private addresses: for the local stack only. */
    WEBHOOK_ALLOW_PRIVATE: booleanEnv(false),
    /** Waits before each retry, e.g. `5s,5m,30m,2h,5h,10h,10h`, in milliseconds. */
    WEBHOOK_RETRY_SCHEDULE: durationListEnv('5s,5m,30m,2h,5h,10h,10h'),
    /** Time limit of one attempt, connection to last byte. */
    WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(15_000),
    /** A webhook failing on every attempt for this long is disabled. */
    WEBHOOK_DISABLE_AFTER: durationEnv('5d'),
    /**
     * After a secret rotation, deliveries are signed with the new and the previous secret for
     * this long (Standard Webhooks: several `v1,` signatures), so receivers can switch over.
     */
    WEBHOOK_SECRET_OVERLAP: durationEnv('24h', { max: '30d' }),
    /** Finished deliveries (and their attempt logs) are kept this long. */
    WEBHOOK_DELIVERY_RETENTION: durationEnv('14d'),
    /** Attempts in flight at once. */
    DELIVERY_CONCURRENCY: z.coerce.number().int().min(1).max(512).default(16),
    /**
     * Runs the delivery worker in this process (default). False makes a replica that records
     * deliveries but leaves sending them to the replicas that run one.
     */
    DELIVERY_WORKER: booleanEnv(true),
    /** How often the worker looks for due deliveries nobody told it about (other replicas'). */
    DELIVERY_POLL_INTERVAL: durationEnv('250ms', { min: '10ms', max: '1m' }),
    /**
     * A webhook gets one send at a time, so a prompt receiver sees events in order; once a send
     * has taken this long, the next may start beside it, so a slow receiver is not held up by
     * its own first request.
     */
    DELIVERY_IN_ORDER_WINDOW: durationEnv('1s', { min: '10ms', max: '1m' }),
    /** At shutdown, how long running attempts may finish before being aborted and handed back. */
    DELIVERY_STOP_GRACE: durationEnv('5s', { max: '1m' }),
    /**
     * How often the housekeeping runs (and once at start): finished deliveries past
     * WEBHOOK_DELIVERY_RETENTION are deleted, and secrets still in clear or under a previous key
     * are sealed under ENCRYPTION_KEY.
     */
    DELIVERY_HOUSEKEEPING_INTERVAL: durationEnv('1h', { min: '100ms' }),
  });

export type Config = z.infer<typeof configSchema>;
