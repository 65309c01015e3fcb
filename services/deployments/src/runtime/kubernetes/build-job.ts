import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Registry } from '@platform/kube';
import { runProgram } from '@platform/shared';
import { buildContainerCommand, WORKSPACE } from './build-output';
import {
  DEPLOYMENT_ID,
  platformEnv,
  RESTRICTED_CONTAINER,
  SERVICE_ID_LABEL,
  type DeploymentSpec,
  type K8sObject,
  type KubernetesRunnerSettings,
} from './objects';

/**
 * A build on the cluster without any way from the build's pod to the platform or the host: the
 * platform fetches the commit itself (as the local runtime does) and pushes the checkout into the
 * registry as a layer on the service's base image, the build context; the kubelet pulls that image
 * for the Job, whose one container runs the build command in it. Its result comes back through
 * the API server (build-output.ts) and the platform pushes the app's image (builds.ts). The Job's
 * skeleton, `buildJob`, is every build's: a Dockerfile's (dockerfile-job.ts) gives its own pod.
 */

export const buildJobName = (spec: Pick<DeploymentSpec, 'deploymentId'>) =>
  `build-${spec.deploymentId}`;

/** The checkout in `dir` as a layer: every file at `at` (WORKSPACE), owned by `uid` (1000). */
export async function checkoutLayer(dir: string, at = WORKSPACE, uid = 1000): Promise<Buffer> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'build-context-'));
  try {
    const file = path.join(tmp, 'layer.tar');
    await runProgram('tar', [
      '-C',
      dir,
      `--owner=${uid}`,
      `--group=${uid}`,
      '--numeric-owner',
      '--exclude=./.git',
      `--transform=s,^\\.,${at.slice(1)},`,
      '-cf',
      file,
      '.',
    ]);
    return await readFile(file);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

/** Pushes the build context `<registry>/builds/<serviceId>:<deploymentId>`; its digest reference. */
export async function pushBuildContext(
  registry: Registry,
  settings: KubernetesRunnerSettings,
  spec: DeploymentSpec,
  checkoutDir: string,
): Promise<string> {
  const image = await registry.appendImage(
    settings.baseImage,
    `builds/${spec.serviceId}`,
    spec.deploymentId,
    [await checkoutLayer(checkoutDir)],
    // Its own label: no two deployments' contexts share a digest, so deleting one keeps the other.
    { workingDir: WORKSPACE, labels: { 'platform.dev/deployment-id': spec.deploymentId } },
  );
  return image.reference;
}

/**
 * A container's command as Kubernetes must pass it on: the kubelet expands `$(NAME)` in `command`
 * and `args` from the container's environment (the tenant's variables included) and turns `$$`
 * into `$`; every `$` doubled, each word reaches the process exactly as written.
 */
export const literalCommand = (words: string[]): string[] =>
  words.map((word) => word.replace(/\$/g, '$$$$'));

/**
 * A build container's CPU, memory and disk: its ephemeral storage (the workspace, /tmp, its log)
 * past `disk` has the kubelet evict the pod, which ends the build (BUILD_DISK_BYTES).
 */
function buildResources({ cpu, cpuRequest, memory, disk }: KubernetesRunnerSettings['build']) {
  return {
    requests: { cpu: cpuRequest, memory },
    limits: { cpu, memory, ...(disk && { 'ephemeral-storage': disk }) },
  };
}

/** What a builder's Job has of its own (build-job.ts for a build command, dockerfile-job.ts). */
export interface BuildJobOwn {
  /** The pod's own security settings: its security context, and `hostUsers` when set. */
  pod: { hostUsers?: boolean; securityContext: Record<string, unknown> };
  /** The build container's working directory (none: the image's), command and security context. */
  container: {
    workingDir?: string;
    command: string[];
    /** Its HOME (with `PLATFORM_*` in its environment, the variables from the Secret). */
    home: string;
    securityContext: Record<string, unknown>;
  };
}

/**
 * The Secret with the deployment's variables and the Job that runs the build in the context image,
 * as every build has them: no retry, the build timeout as its deadline, no service account token,
 * the RuntimeClass, the variables and `PLATFORM_*` in the container's environment, the build's
 * CPU, memory and disk; what the builder gives (`own`) is the rest.
 */
export function buildJob(
  settings: KubernetesRunnerSettings,
  spec: DeploymentSpec,
  contextImage: string,
  own: BuildJobOwn,
): { secret: K8sObject; job: K8sObject } {
  const name = buildJobName(spec);
  const namespace = settings.buildNamespace;
  const labels = {
    'app.kubernetes.io/component': 'build',
    'app.kubernetes.io/managed-by': 'platform-deployments',
    [SERVICE_ID_LABEL]: spec.serviceId,
    [DEPLOYMENT_ID]: spec.deploymentId,
  };
  const { workingDir, command, home, securityContext } = own.container;
  return {
    secret: {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace, labels },
      type: 'Opaque',
      stringData: spec.variables,
    },
    job: {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name, namespace, labels },
      spec: {
        backoffLimit: 0,
        activeDeadlineSeconds: settings.build.timeoutSeconds,
        ttlSecondsAfterFinished: 3600,
        template: {
          metadata: { labels },
          spec: {
            restartPolicy: 'Never',
            // Cancel and the deadline end a build at once (a shell as PID 1 ignores SIGTERM).
            terminationGracePeriodSeconds: 3,
            automountServiceAccountToken: false,
            ...(settings.runtimeClassName && { runtimeClassName: settings.runtimeClassName }),
            enableServiceLinks: false,
            ...own.pod,
            containers: [
              {
                name: 'build',
                image: contextImage,
                ...(workingDir !== undefined && { workingDir }),
                command,
                env: Object.entries({ HOME: home, ...platformEnv(spec) }).map(
                  ([envName, value]) => ({ name: envName, value }),
                ),
                envFrom: [{ secretRef: { name } }],
                resources: buildResources(settings.build),
                securityContext,
              },
            ],
          },
        },
      },
    },
  };
}

/**
 * A build command's Job: the command run in `rootDirectory` of the checkout (an argument of sh,
 * never part of the script: build-output.ts) as the base image's user under the `restricted`
 * security context.
 */
export function buildJobObjects(
  settings: KubernetesRunnerSettings,
  spec: DeploymentSpec,
  contextImage: string,
): { secret: K8sObject; job: K8sObject } {
  return buildJob(settings, spec, contextImage, {
    pod: { securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } } },
    container: {
      workingDir: path.posix.join(WORKSPACE, spec.rootDirectory),
      command: literalCommand(buildContainerCommand(spec.buildCommand ?? 'true')),
      home: '/home/node',
      securityContext: RESTRICTED_CONTAINER,
    },
  });
}
