import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:http';
import path from 'node:path';
import { k8s, Registry, type Kubernetes } from '@platform/kube';
import {
  closeHttpServer,
  createSecretBox,
  localSourcePolicy,
  type Runtime,
} from '@platform/shared';
import type { Config } from './config';
import type { DeploymentsRepository } from './deployments/deployments.repository';
import { KubernetesSteps } from './pipeline/kubernetes-steps';
import { createRouter } from './runtime/router';
import { AppImages } from './runtime/kubernetes/app-images';
import { KubernetesAppLogs } from './runtime/kubernetes/app-logs';
import { KubernetesRoutes } from './runtime/kubernetes/routes';
import { KubernetesBuilds } from './runtime/kubernetes/builds';
import { KubernetesReleases } from './runtime/kubernetes/releases';
import { runnerSettingsOf } from './runtime/kubernetes/runner.env';
import { removeServiceObjects } from './runtime/kubernetes/service-removal';
import { releaseRouted } from './runtime/kubernetes/release-routed';
import type { SourceSnapshots } from './source/snapshot';

/** The cluster KUBECONFIG names, else the one this process runs in (its ServiceAccount). */
export function kubeConfigFrom(config: Pick<Config, 'KUBECONFIG'>): Kubernetes.KubeConfig {
  const kc = new k8s.KubeConfig();
  if (config.KUBECONFIG) kc.loadFromFile(config.KUBECONFIG);
  else kc.loadFromCluster();
  return kc;
}

/**
 * With RUNTIME=kubernetes a deployment's build is kept as its app image in the registry: what a
 * rollback checks for (TriggerService), in every replica, whether it runs the pipeline or not.
 */
export function keptImages(config: Config) {
  const settings = runnerSettingsOf(config);
  const images = new AppImages(new Registry(settings.registry), settings);
  return {
    find: async (ref: { serviceId: string; deploymentId: string }) =>
      (await images.find(ref.serviceId, ref.deploymentId)) ? ref : null,
  };
}

/**
 * The steps of a pipeline with RUNTIME=kubernetes (docs/kubernetes-runner.md): builds as Jobs and
 * apps as Deployments in the cluster, images in KUBE_REGISTRY; the apps' output (AppLogs); and how
 * a deleted service's app goes. The cluster must answer at start-up: a replica that cannot reach
 * it fails to start.
 */
export async function openKubernetesSteps(
  config: Config,
  { logger }: Runtime,
  parts: {
    snapshots: SourceSnapshots;
    repository: DeploymentsRepository;
    kc: Kubernetes.KubeConfig;
    /** This process's router, if it serves one: a release is DEPLOYED once it routes there. */
    routes?: KubernetesRoutes;
  },
) {
  const { kc } = parts;
  const version = await kc.makeApiClient(k8s.VersionApi).getCode();
  const settings = runnerSettingsOf(config);
  const images = new AppImages(new Registry(settings.registry), settings);
  const appLogs = new KubernetesAppLogs(kc, settings);
  const secretBox = createSecretBox(config);
  const checkoutsDir = path.join(config.BUILDS_DIR, 'checkouts');
  await mkdir(checkoutsDir, { recursive: true, mode: 0o700 });
  const steps = new KubernetesSteps({
    settings,
    registry: new Registry(settings.registry),
    builds: new KubernetesBuilds(kc, settings),
    releases: new KubernetesReleases(kc, settings),
    images,
    snapshots: parts.snapshots,
    secretBox,
    liveDeploymentOf: (serviceId) => parts.repository.latestDeployed(serviceId),
    // Never a repository among the platform's own files, its checkouts included.
    sources: localSourcePolicy(config, [config.BUILDS_DIR, config.RUNTIME_DIR]),
    fetchTimeoutMs: config.SOURCE_FETCH_TIMEOUT,
    checkoutsDir,
    appLogs,
    logPollMs: config.RUNTIME_LOG_POLL_INTERVAL,
    releaseRouted: (spec, signal) =>
      releaseRouted(kc, settings, spec, signal, parts.routes?.routedHosts),
  });
  logger.info(
    { cluster: kc.getCurrentCluster()?.server, version: version.gitVersion },
    'Kubernetes runner ready',
  );
  return {
    steps,
    kc,
    settings,
    appLogs,
    secretBox,
    runtime: {
      async stopService(serviceId: string) {
        await removeServiceObjects(kc, serviceId);
        await images.removeService(serviceId);
      },
    },
  };
}

/**
 * The router the gateway forwards apps' hosts to (RUNTIME_ROUTER_HOST:RUNTIME_ROUTER_PORT) with
 * RUNTIME=kubernetes: each request to its service's Service (KubernetesRoutes), closed at shutdown.
 */
export async function startKubernetesRouter(
  config: Config,
  { logger, lifecycle }: Runtime,
  kc: Kubernetes.KubeConfig,
): Promise<KubernetesRoutes> {
  const routes = new KubernetesRoutes(kc, runnerSettingsOf(config), logger);
  await routes.start();
  const router = createServer(createRouter(routes.liveRelease, logger));
  lifecycle.onShutdown('apps router', async () => {
    await closeHttpServer(router);
    await routes.stop();
  });
  await new Promise<void>((resolve, reject) => {
    router.once('error', reject);
    router.listen(config.RUNTIME_ROUTER_PORT, config.RUNTIME_ROUTER_HOST, resolve);
  });
  return routes;
}
