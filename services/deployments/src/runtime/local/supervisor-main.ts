import { runService } from '@platform/shared';
import { composeSupervisor } from './supervisor.compose';
import { supervisorConfigSchema } from './supervisor.config';

// The local runtime's supervisor, a process of its own that outlives the deployments service
// (which starts it detached: client.ts). runService listens with the router on
// RUNTIME_ROUTER_PORT; the control API is on the unix socket compose opens.
runService({
  name: 'runtime-supervisor',
  configSchema: supervisorConfigSchema,
  compose: composeSupervisor,
  shutdownTimeoutMs: 30_000,
});
