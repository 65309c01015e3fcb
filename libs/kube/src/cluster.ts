import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { k8s, type Kubernetes } from './client';

const run = promisify(execFile);

/** The repository's scripts/infra/infra.sh (this file is libs/kube/src or libs/kube/dist). */
export const INFRA_SCRIPT = path.resolve(__dirname, '../../../scripts/infra/infra.sh');

/** A cluster to run on: its kubeconfig and the image registry its nodes pull from. */
export interface Cluster {
  kubeconfigPath: string;
  /** `host:port` of the registry, reachable from this host and pulled from by the nodes. */
  registry: string;
  /** The platform's Node base image in that registry (scripts/infra/kube/images.sh). */
  nodeImage: string;
  /**
   * Where its DNS answers when that is not a kube-dns pod (KUBE_DNS_CIDRS: the local cluster's
   * CoreDNS on its node), comma-separated; empty otherwise.
   */
  dnsCidrs: string;
  /** Whether scripts/infra started it (rather than KUBECONFIG naming one). */
  local: boolean;
}

/** Runs `infra.sh <args>` and returns what it printed on stdout. */
export async function infra(args: string[], timeoutMs: number): Promise<string> {
  const { stdout } = await run('bash', [INFRA_SCRIPT, ...args], {
    timeout: timeoutMs,
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout;
}

/** `KEY=value` lines (infra.sh url) as an object. */
export const parseUrlLines = (text: string): Record<string, string> =>
  Object.fromEntries(
    text
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line.includes('='))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );

/** The local cluster's addresses, as `infra.sh url kube` prints them. */
export async function localClusterUrls(): Promise<Cluster> {
  const urls = parseUrlLines(await infra(['url', 'kube'], 60_000));
  if (!urls.KUBECONFIG || !urls.KUBE_REGISTRY || !urls.KUBE_NODE_IMAGE) {
    throw new Error(`infra.sh url kube printed no KUBECONFIG, KUBE_REGISTRY or KUBE_NODE_IMAGE`);
  }
  return {
    kubeconfigPath: urls.KUBECONFIG,
    registry: urls.KUBE_REGISTRY,
    nodeImage: urls.KUBE_NODE_IMAGE,
    dnsCidrs: urls.KUBE_DNS_CIDRS ?? '',
    local: true,
  };
}

/** The Node base image's tag, as scripts/infra/kube/images.sh pushes it. */
export const NODE_IMAGE_TAG = 'platform/node:22.23.3';

/**
 * The cluster tests and the local stack run on: the one `KUBECONFIG` names (its registry in
 * `KUBE_REGISTRY`, default 127.0.0.1:5000; the base image in `KUBE_NODE_IMAGE`, default
 * `<registry>/platform/node:22.23.3`), else the local single-node cluster, started (and on the
 * first run built, which takes many minutes) by scripts/infra.
 */
export async function findOrStartCluster(
  env: NodeJS.ProcessEnv = process.env,
  startTimeoutMs = 45 * 60_000,
): Promise<Cluster> {
  if (env.KUBECONFIG) {
    const registry = env.KUBE_REGISTRY ?? '127.0.0.1:5000';
    return {
      kubeconfigPath: env.KUBECONFIG,
      registry,
      nodeImage: env.KUBE_NODE_IMAGE ?? `${registry}/${NODE_IMAGE_TAG}`,
      dnsCidrs: env.KUBE_DNS_CIDRS ?? '',
      local: false,
    };
  }
  await infra(['start', 'kube'], startTimeoutMs);
  return localClusterUrls();
}

export function kubeConfigOf(cluster: Cluster): Kubernetes.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(cluster.kubeconfigPath);
  return kc;
}
