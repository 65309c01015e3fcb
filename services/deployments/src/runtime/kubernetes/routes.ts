import { Agent } from 'node:http';
import { k8s, type Kubernetes } from '@platform/kube';
import type { Logger } from '@platform/shared';
import type { RoutedRelease } from '../router';
import { APP_SELECTOR, SERVICE_ID_LABEL, type KubernetesRunnerSettings } from './objects';

/**
 * Where the router (runtime/router.ts) sends `<serviceId>.<appsDomain>` on Kubernetes: the ready
 * pods behind the service's Service, read from its EndpointSlices (which carry the Service's
 * labels, objects.ts), round robin over a keep-alive agent per service, as the local router goes
 * round its copies. The router sees a pod leave as soon as the EndpointSlice says it is no longer
 * ready (a replaced pod, at its deletion), without waiting for kube-proxy to sync the Service.
 * The slices of the runner's namespaces are listed, then watched (k8s.Watch, from the list's
 * resourceVersion), so `liveRelease` answers from memory: a service with no slice left (its
 * Service deleted) answers 404. Each watch asks the API server to end it after
 * `watchTimeoutSeconds` (a connection that died without a word is replaced at the latest then),
 * and is made again from where it ended; one that fails is logged and made again from a new list
 * after a pause.
 */

/** Before a failed list or watch is tried again. */
const RETRY_MS = 2_000;
/** How long one watch lasts at most (the API server's own default is 30–60 min). */
const WATCH_TIMEOUT_SECONDS = 300;

type SliceObject = Kubernetes.V1EndpointSlice;
type Target = { host: string; port: number };

/**
 * One service as the router sees it: the ready endpoints of each of its EndpointSlices, an agent
 * of its own, its requests. A service whose slices are all gone closes its agent once the
 * requests on it are answered.
 */
class ServiceRoute implements RoutedRelease {
  readonly agent = new Agent({ keepAlive: true });
  private readonly slices = new Map<string, Target[]>();
  private ready: Target[] = [];
  private next = 0;
  private inflight = 0;
  private retired = false;

  constructor(readonly spec: { serviceId: string; releaseId: string }) {}

  pick(): Target | undefined {
    if (this.ready.length === 0) return undefined;
    this.next = (this.next + 1) % this.ready.length;
    return this.ready[this.next];
  }

  /** A slice's ready endpoints (`null`: the slice is gone); whether any slice is left. */
  setSlice(uid: string, targets: Target[] | null): boolean {
    if (targets) this.slices.set(uid, targets);
    else this.slices.delete(uid);
    this.ready = [...this.slices.values()].flat();
    return this.slices.size > 0;
  }

  /** The addresses of the ready endpoints requests go to. */
  hosts(): string[] {
    return this.ready.map((target) => target.host);
  }

  hasSlice(uid: string): boolean {
    return this.slices.has(uid);
  }

  sliceIds(): string[] {
    return [...this.slices.keys()];
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

/** A slice's ready endpoints on its `http` port (the pods' 8080). */
function readyTargets(slice: SliceObject): Target[] {
  const port = slice.ports?.find((p) => p.name === 'http')?.port ?? slice.ports?.[0]?.port;
  if (!port) return [];
  return (slice.endpoints ?? [])
    .filter((endpoint) => endpoint.conditions?.ready === true)
    .flatMap((endpoint) => endpoint.addresses.slice(0, 1).map((host) => ({ host, port })));
}

export class KubernetesRoutes {
  /** Per service id: its Service's route. */
  private readonly routes = new Map<string, ServiceRoute>();
  private readonly discovery: Kubernetes.DiscoveryV1Api;
  private resourceVersion = '';
  private stopped = false;
  private watching?: AbortController;
  private loop?: Promise<void>;
  private wake?: () => void;
  private watches = 0;

  constructor(
    private readonly kc: Kubernetes.KubeConfig,
    private readonly settings: Pick<KubernetesRunnerSettings, 'appNamespacePrefix'>,
    private readonly logger: Logger,
    private readonly options: { watchTimeoutSeconds?: number } = {},
  ) {
    this.discovery = kc.makeApiClient(k8s.DiscoveryV1Api);
  }

  /** The live release of a service (for createRouter): its ready pods, or undefined (404). */
  readonly liveRelease = (serviceId: string): RoutedRelease | undefined =>
    this.routes.get(serviceId);

  /** Where a service's requests go now (the ready pods' addresses); undefined: not routed. */
  readonly routedHosts = (serviceId: string): string[] | undefined =>
    this.routes.get(serviceId)?.hosts();

  /** How many watches were made so far (one after each that ended). */
  get watchesMade(): number {
    return this.watches;
  }

  /** Lists the slices (a failure throws), then watches them until stop(). */
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
          'the watch of the apps’ EndpointSlices failed: listing them again',
        );
        this.resourceVersion = '';
        await this.pause(RETRY_MS);
      }
    }
  }

  /** Every app slice as it is now: routes added, changed, and gone for slices not listed. */
  private async relist(): Promise<void> {
    const list = await this.discovery.listEndpointSliceForAllNamespaces({
      labelSelector: APP_SELECTOR,
    });
    const listed = new Set<string>();
    for (const slice of list.items) {
      if (this.apply(slice)) listed.add(slice.metadata!.uid!);
    }
    for (const [serviceId, route] of this.routes) {
      for (const uid of route.sliceIds()) if (!listed.has(uid)) this.remove(serviceId, uid);
    }
    this.resourceVersion = list.metadata?.resourceVersion ?? '';
  }

  /** One watch, from the last resourceVersion; resolves with why it ended (null: the server). */
  private watchOnce(): Promise<unknown> {
    this.watches++;
    return new Promise<unknown>((resolve) => {
      new k8s.Watch(this.kc)
        .watch(
          '/apis/discovery.k8s.io/v1/endpointslices',
          {
            labelSelector: APP_SELECTOR,
            resourceVersion: this.resourceVersion,
            allowWatchBookmarks: true,
            timeoutSeconds: this.options.watchTimeoutSeconds ?? WATCH_TIMEOUT_SECONDS,
          },
          (phase: string, slice: SliceObject & { code?: number }) => this.onEvent(phase, slice),
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

  private onEvent(phase: string, slice: SliceObject & { code?: number }) {
    // An expired resourceVersion (410) ends the watch: the next is made from a new list.
    if (phase === 'ERROR') {
      if (slice.code === 410) this.resourceVersion = '';
      return;
    }
    if (phase === 'ADDED' || phase === 'MODIFIED') this.apply(slice);
    if (phase === 'DELETED') {
      const serviceId = slice.metadata?.labels?.[SERVICE_ID_LABEL];
      if (serviceId) this.remove(serviceId, slice.metadata?.uid ?? '');
    }
    this.resourceVersion = slice.metadata?.resourceVersion ?? this.resourceVersion;
  }

  /** Takes in a slice of a service's Service, if it is one of the runner's; whether it was. */
  private apply(slice: SliceObject): boolean {
    const { namespace, uid, labels } = slice.metadata ?? {};
    const serviceId = labels?.[SERVICE_ID_LABEL];
    if (!serviceId || !uid || !namespace?.startsWith(`${this.settings.appNamespacePrefix}-`)) {
      return false;
    }
    let route = this.routes.get(serviceId);
    if (!route) {
      route = new ServiceRoute({ serviceId, releaseId: `${namespace}/${serviceId}` });
      this.routes.set(serviceId, route);
    }
    route.setSlice(uid, readyTargets(slice));
    return true;
  }

  /** A slice of a service goes; with its last one, the service's route. */
  private remove(serviceId: string, uid: string) {
    const route = this.routes.get(serviceId);
    if (!route?.hasSlice(uid)) return;
    if (route.setSlice(uid, null)) return;
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
