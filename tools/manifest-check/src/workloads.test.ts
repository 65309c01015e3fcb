import type { K8sObject } from './checker';
import {
  APPS_ROUTER_PORT,
  SERVICES,
  SERVICE_NAMES,
  findObject,
  mainContainer,
  objectsOfKind,
} from './kubernetes';
import { OVERLAYS, useRendered } from './test/rendered';

/** The longest a process takes to shut down after SIGTERM (its Lifecycle time limit). */
const PROCESS_SHUTDOWN_LIMIT_S = 25;

describe.each(OVERLAYS)('the Deployments of the %s overlay', (overlay) => {
  const result = useRendered(overlay);
  let deployments: K8sObject[];

  beforeAll(() => {
    deployments = objectsOfKind(result.objects, 'Deployment');
  });

  const eachDeployment = (check: (d: K8sObject, container: any) => void) => {
    expect(deployments.length).toBeGreaterThanOrEqual(SERVICE_NAMES.length);
    for (const deployment of deployments) {
      try {
        check(deployment, mainContainer(deployment));
      } catch (err) {
        (err as Error).message =
          `Deployment ${deployment.metadata.name}: ${(err as Error).message}`;
        throw err;
      }
    }
  };

  it('probe readiness on /readyz and liveness on /healthz of the container’s own port', () => {
    eachDeployment((_d, container) => {
      const ports = container.ports.map((p: any) => [p.name, p.containerPort]).flat();
      expect(container.readinessProbe.httpGet.path).toBe('/readyz');
      expect(container.livenessProbe.httpGet.path).toBe('/healthz');
      expect(ports).toContain(container.readinessProbe.httpGet.port);
      expect(ports).toContain(container.livenessProbe.httpGet.port);
      if (container.startupProbe) expect(container.startupProbe.httpGet.path).toBe('/healthz');
    });
  });

  it('listen on the port each service is documented on (deployments also on the apps’ router’s)', () => {
    for (const name of SERVICE_NAMES) {
      const container = mainContainer(findObject(result.objects, 'Deployment', name));
      const router = name === 'deployments' ? [['router', APPS_ROUTER_PORT]] : [];
      expect(container.ports.map((p: any) => [p.name, p.containerPort])).toEqual([
        ['http', SERVICES[name].port],
        ...router,
      ]);
    }
  });

  it('request and limit CPU and memory', () => {
    eachDeployment((_d, container) => {
      for (const kind of ['requests', 'limits']) {
        expect(Object.keys(container.resources?.[kind] ?? {}).sort()).toEqual(['cpu', 'memory']);
      }
    });
  });

  it('cap the Node heap at half the memory limit at most (V8 would size it from what it sees and collect garbage late)', () => {
    const mebibytes = (quantity: string) => {
      const match = /^(\d+)(Mi|Gi)$/.exec(quantity);
      if (!match) throw new Error(`a memory limit in Mi or Gi: ${quantity}`);
      return Number(match[1]) * (match[2] === 'Gi' ? 1024 : 1);
    };
    eachDeployment((_d, container) => {
      const options = container.env?.find((e: any) => e.name === 'NODE_OPTIONS')?.value ?? '';
      const cap = /--max-old-space-size=(\d+)/.exec(options);
      expect(cap).not.toBeNull();
      expect(Number(cap![1])).toBeLessThanOrEqual(mebibytes(container.resources.limits.memory) / 2);
    });
  });

  it('run as user 1000, never root, with a read-only root file system, no privilege escalation, no capabilities and the RuntimeDefault seccomp profile', () => {
    eachDeployment((deployment, container) => {
      const pod = deployment.spec.template.spec.securityContext ?? {};
      const own = container.securityContext ?? {};
      expect(own.runAsUser ?? pod.runAsUser).toBe(1000);
      expect(own.runAsNonRoot ?? pod.runAsNonRoot).toBe(true);
      expect(own.readOnlyRootFilesystem).toBe(true);
      expect(own.allowPrivilegeEscalation).toBe(false);
      expect(own.privileged ?? false).toBe(false);
      expect(own.capabilities?.drop).toEqual(['ALL']);
      expect(own.capabilities?.add ?? []).toEqual([]);
      expect((own.seccompProfile ?? pod.seccompProfile)?.type).toBe('RuntimeDefault');
    });
  });

  it('give the read-only containers a writable emptyDir at /tmp', () => {
    eachDeployment((deployment, container) => {
      const mount = container.volumeMounts?.find((m: any) => m.mountPath === '/tmp');
      expect(mount).toBeDefined();
      const volume = deployment.spec.template.spec.volumes.find((v: any) => v.name === mount.name);
      expect(volume.emptyDir).toBeDefined();
    });
  });

  it('sleep in preStop and leave time to drain before SIGKILL', () => {
    eachDeployment((deployment, container) => {
      const command: string[] = container.lifecycle?.preStop?.exec?.command ?? [];
      expect(command[0]).toBe('sleep');
      const sleepSeconds = Number(command[1]);
      expect(sleepSeconds).toBeGreaterThan(0);
      const grace = deployment.spec.template.spec.terminationGracePeriodSeconds;
      if (SERVICE_NAMES.includes(deployment.metadata.name as never)) {
        expect(grace).toBeGreaterThanOrEqual(sleepSeconds + PROCESS_SHUTDOWN_LIMIT_S);
      } else {
        expect(grace).toBeGreaterThan(sleepSeconds);
      }
    });
  });

  it('turn off service links, whose injected variables (GATEWAY_PORT=tcp://…) would break the config', () => {
    eachDeployment((deployment) => {
      expect(deployment.spec.template.spec.enableServiceLinks).toBe(false);
    });
  });

  it('mount no service-account token, but deployments its own (its runner talks to the API server)', () => {
    eachDeployment((deployment) => {
      const pod = deployment.spec.template.spec;
      const runner = deployment.metadata.name === 'deployments';
      expect([pod.serviceAccountName, pod.automountServiceAccountToken]).toEqual(
        runner ? ['deployments', true] : [undefined, false],
      );
    });
  });

  it('use the ghcr.io/example/platform-<name> image with an explicit tag', () => {
    eachDeployment((deployment, container) => {
      expect(container.image).toMatch(
        new RegExp(`^ghcr\\.io/example/platform-${deployment.metadata.name}:[\\w.-]+$`),
      );
    });
  });

  it('roll out without taking a ready pod away first', () => {
    eachDeployment((deployment) => {
      expect(deployment.spec.strategy?.rollingUpdate?.maxUnavailable ?? '25%').toBe(0);
    });
  });
});

describe('the HorizontalPodAutoscalers of the production overlay', () => {
  const result = useRendered('production');

  it('scale each of the five Deployments on CPU', () => {
    for (const name of SERVICE_NAMES) {
      const hpa = objectsOfKind(result.objects, 'HorizontalPodAutoscaler').find(
        (h) => h.spec.scaleTargetRef.kind === 'Deployment' && h.spec.scaleTargetRef.name === name,
      );
      expect(hpa?.apiVersion).toBe('autoscaling/v2');
      const cpu = hpa!.spec.metrics.find((m: any) => m.resource?.name === 'cpu');
      expect(cpu.resource.target.type).toBe('Utilization');
      findObject(result.objects, 'Deployment', name);
    }
  });

  it('leave the replica count to the autoscaler (a replicas field would reset it on every apply)', () => {
    for (const name of SERVICE_NAMES) {
      expect(findObject(result.objects, 'Deployment', name).spec.replicas).toBeUndefined();
    }
  });
});
