import { z } from 'zod';
import { baseEnv, booleanEnv, kafkaEnv, mongoEnv, portEnv } from '@platform/shared';

/** The projects service's environment (docs/architecture.md, Processes). */
export const configSchema = baseEnv
  .merge(mongoEnv)
  .merge(kafkaEnv)
  .extend({
    PORT: portEnv(4002),
    /** This service's own database: projects and services live here and nowhere else. */
    MONGO_DB: z.string().min(1).default('platform_projects'),
    /** Consumer group of the deletion cascade; every replica shares it. */
    KAFKA_GROUP_ID: z.string().min(1).default('projects'),
    /**
     * Where a new consumer group starts: true (default) misses no deletion; false starts at the
     * end of the topics (a test's or an e2e run's throwaway group).
     */
    KAFKA_FROM_BEGINNING: booleanEnv(true),
  });

export type Config = z.infer<typeof configSchema>;
