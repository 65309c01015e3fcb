import { Agent } from 'node:http';
import { k8s, type Kubernetes } from '@platform/kube';
import type { Logger } from '@platform/shared';
import type { RoutedRelease } from '../router';
import { APP_SELECTOR, SERVICE_ID_LABEL, type KubernetesRunnerSettings } from './objects';

/**
 * Where the router (runtime/router.ts) sends `<serviceId>.<appsDomain>` on Kubernetes: the
 * service's Service, which the runner applies with each release (objects.ts) and which reaches
 * the pods of the release its Deployment runs. The app Services of the runner's namespaces are
 * listed, then watched (k8s.Watch, from the list's resourceVersion), so `liveRelease` answers from
 * memory: a Service applied is routed, a Service deleted answers 404. A watch the API server
 * ends is made again; one that fails is logged and made again from a new list after a pause.
 */

/** Before a failed list or watch is tried again. */
const RETRY_MS = 2_000;
/** The Service's port (objects.ts) where none is named `http`. */
const SERVICE_PORT = 80;

type ServiceObject = Kubernetes.V1Service;

/**
 * One Service as the router sees it: its cluster IP, an agent of its own, its requests. A Service
 * deleted or replaced closes its agent once the requests on it are answered.
 */
class ServiceRoute implements RoutedRelease {
  // A connection per request: kube-proxy picks a pod per connection, so a kept one would send
  // every request of a visitor to one replica (sockets on a Service of one pod cost little).
  readonly agent = new Agent({ keepAlive: false });
  private inflight = 0;
  private retired = false;

  constructor(
    readonly spec: { serviceId: string; releaseId: string },
    readonly uid: string,
    private target: { host: string; port: number } | undefined,
  ) {}

  pick() {
    return this.target;
  }

  update(target: { host: string; port: number } | undefined) {
    this.target = target;
  }

  requestStarted() {
    this.inflight++;
  }

  requestFinished() {
    this.inflight--;
    if (this.retired && this.inflight === 0) this.agent.destroy();
  }

  retire() {
    this.retired = true;
    if (this.inflight === 0) this.agent.destroy();
  }
}

/** Where a Service is reached: its cluster IP and its `http` port; none without a cluster IP. */
function targetOf(service: ServiceObject): { host: string; port: number } | undefined {
  const host = service.spec?.clusterIP;
  if (!host || host === 'None') return undefined;
  const port = service.spec?.ports?.find((p) => p.name === 'http')?.port ?? SERVICE_PORT;
  return { host, port };
}

export class KubernetesRoutes {
  /** Per service id: its Service's route. */
  private readonly routes = new Map<string, ServiceRoute>();
  private readonly core: Kubernetes.CoreV1Api;
  private resourceVersion = '';
  private stopped = false;
  private watching?: AbortController;
  private loop?: Promise<void>;
  private wake?: () => void;

  constructor(
    private readonly kc: Kubernetes.KubeConfig,
    private readonly settings: Pick<KubernetesRunnerSettings, 'appNamespacePrefix'>,
    private readonly logger: Logger,
  ) {
    this.core = kc.makeApiClient(k8s.CoreV1Api);
  }

  /** The live release of a service (for createRouter): its Service, or undefined (404). */
  readonly liveRelease = (serviceId: string): RoutedRelease | undefined =>
    this.routes.get(serviceId);

  /** Lists the Services (a failure throws), then watches them until stop(). */
  async start(): Promise<void> {
    if (this.loop) throw new Error('KubernetesRoutes started twice');
    await this.relist();
    this.loop = this.watchUntilStopped();
  }

  /** Ends the watch (resolves once its request is closed) and closes every route's agent. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.watching?.abort();
    this.wake?.();
    await this.loop;
    for (const route of this.routes.values()) route.retire();
    this.routes.clear();
  }

  private async watchUntilStopped(): Promise<void> {
    while (!this.stopped) {
      try {
        if (!this.resourceVersion) await this.relist();
        if (this.stopped) break;
        const err = await this.watchOnce();
        if (this.stopped || !err) continue;
        if ((err as { statusCode?: number }).statusCode === 410) this.resourceVersion = '';
        else throw err;
      } catch (err) {
        if (this.stopped) break;
        this.logger.warn(
          { err: (err as Error).message },
          'the watch of the apps’ Services failed: listing them again',
        );
        this.resourceVersion = '';
        await this.pause(RETRY_MS);
      }
    }
  }

  /** Every app Service as it is now: routes added, changed, and gone for Services not listed. */
  private async relist(): Promise<void> {
    const list = await this.core.listServiceForAllNamespaces({ labelSelector: APP_SELECTOR });
    const listed = new Set<string>();
    for (const service of list.items) {
      if (this.apply(service)) listed.add(service.metadata!.uid!);
    }
    for (const [serviceId, route] of this.routes) {
      if (!listed.has(route.uid)) this.remove(serviceId, route.uid);
    }
    this.resourceVersion = list.metadata?.resourceVersion ?? '';
  }

  /** One watch, from the last resourceVersion; resolves with why it ended (null: the server). */
  private watchOnce(): Promise<unknown> {
    return new Promise<unknown>((resolve) => {
      new k8s.Watch(this.kc)
        .watch(
          '/api/v1/services',
          {
            labelSelector: APP_SELECTOR,
            resourceVersion: this.resourceVersion,
            allowWatchBookmarks: true,
          },
          (phase: string, service: ServiceObject & { code?: number }) =>
            this.onEvent(phase, service),
          (err: unknown) => resolve(err ?? null),
        )
        .then(
          (controller) => {
            this.watching = controller;
            if (this.stopped) controller.abort();
          },
          (err: unknown) => resolve(err),
        );
    });
  }

  private onEvent(phase: string, service: ServiceObject & { code?: number }) {
    // An expired resourceVersion (410) ends the watch: the next is made from a new list.
    if (phase === 'ERROR') {
      if (service.code === 410) this.resourceVersion = '';
      return;
    }
    if (phase === 'ADDED' || phase === 'MODIFIED') this.apply(service);
    if (phase === 'DELETED') {
      const serviceId = service.metadata?.labels?.[SERVICE_ID_LABEL];
      if (serviceId) this.remove(serviceId, service.metadata?.uid ?? '');
    }
    this.resourceVersion = service.metadata?.resourceVersion ?? this.resourceVersion;
  }

  /** Routes a service to its Service, if it is one of the runner's; whether it was. */
  private apply(service: ServiceObject): boolean {
    const { namespace, name, uid, labels } = service.metadata ?? {};
    const serviceId = labels?.[SERVICE_ID_LABEL];
    if (!serviceId || !uid || !namespace?.startsWith(`${this.settings.appNamespacePrefix}-`)) {
      return false;
    }
    const current = this.routes.get(serviceId);
    if (current?.uid === uid) {
      current.update(targetOf(service));
      return true;
    }
    current?.retire();
    const spec = { serviceId, releaseId: `${namespace}/${name}` };
    this.routes.set(serviceId, new ServiceRoute(spec, uid, targetOf(service)));
    return true;
  }

  /** A service's route goes, if it is still that Service's (`uid`). */
  private remove(serviceId: string, uid: string) {
    const route = this.routes.get(serviceId);
    if (route?.uid !== uid) return;
    route.retire();
    this.routes.delete(serviceId);
  }

  private pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
