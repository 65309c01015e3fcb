import { runService } from '@platform/shared';
import { compose } from './compose';
import { configSchema } from './config';

runService({ name: 'webhooks', configSchema, compose, shutdownTimeoutMs: 25_000 });
