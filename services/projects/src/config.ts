import type { z } from 'zod';
import { consumerEnv, serviceEnv } from '@platform/shared';

/** The projects service's environment (docs/architecture.md, Processes). */
export const configSchema = serviceEnv({ port: 4002, database: 'platform_projects' }).merge(
  consumerEnv('projects'),
);

export type Config = z.infer<typeof configSchema>;
