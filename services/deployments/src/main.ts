import { runService } from '@platform/shared';
import { compose } from './compose';
import { configSchema } from './config';

runService({
  name: 'deployments',
  configSchema,
  compose,
  // Room for the HTTP drain and a running step's SIGTERM grace (STEP_KILL_GRACE) before the exit.
  shutdownTimeoutMs: 25_000,
});
