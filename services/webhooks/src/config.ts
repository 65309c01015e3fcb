import { z } from 'zod';
import { baseEnv, booleanEnv, kafkaEnv, mongoEnv, portEnv } from '@platform/shared';
import { parseDuration, parseRetrySchedule } from './deliveries/retry-schedule';

const retrySchedule = z.string().transform((text, ctx) => {
  try {
    return parseRetrySchedule(text);
  } catch (err) {
    ctx.addIssue({ code: z.ZodIssueCode.custom, message: (err as Error).message });
    return z.NEVER;
  }
});

const duration = z.string().transform((text, ctx) => {
  const ms = parseDuration(text);
  if (ms === null || ms === 0) {
    ctx.addIssue({
      code: z.ZodIssueCode.custom,
      message: 'must be a duration like 30m, 12h or 5d',
    });
    return z.NEVER;
  }
  return ms;
});

export const configSchema = baseEnv
  .merge(mongoEnv)
  .merge(kafkaEnv)
  .extend({
    PORT: portEnv(4004),
    /** This service's own database. */
    MONGO_DB: z.string().min(1).default('platform_webhooks'),
    /** Base URL of the projects service, asked who owns a project. */
    PROJECTS_URL: z.string().url().default('http://127.0.0.1:4002'),
    KAFKA_GROUP_ID: z.string().min(1).default('webhooks'),
    /** Where a new consumer group starts: true (default) misses nothing; false starts at the end. */
    KAFKA_FROM_BEGINNING: booleanEnv(true),
    /** Lets deliveries reach loopback and private addresses: for the local stack only. */
    WEBHOOK_ALLOW_PRIVATE: booleanEnv(false),
    /** Waits before each retry, e.g. `5s,5m,30m,2h,5h,10h,10h` (ms, s, m, h, d). */
    WEBHOOK_RETRY_SCHEDULE: retrySchedule.default('5s,5m,30m,2h,5h,10h,10h'),
    /** Time limit of one attempt, connection to last byte. */
    WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(15_000),
    /** A webhook failing on every attempt for this long is disabled. */
    WEBHOOK_DISABLE_AFTER: duration.default('5d'),
    /** Finished deliveries (and their attempt logs) are kept this long. */
    WEBHOOK_DELIVERY_RETENTION: duration.default('14d'),
    /** Attempts in flight at once. */
    DELIVERY_CONCURRENCY: z.coerce.number().int().min(1).max(512).default(16),
  });

export type Config = z.infer<typeof configSchema>;
