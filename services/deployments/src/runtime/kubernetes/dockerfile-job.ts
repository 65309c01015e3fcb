import { lstat, readFile, realpath } from 'node:fs/promises';
import path from 'node:path';
import { imageArchive, RegistryError, tarOf, type Registry } from '@platform/kube';
import type { BuildContainer } from './build-output';
import { buildJob, checkoutLayer, literalCommand } from './build-job';
import { baseImagesOf, pinBaseImages } from './dockerfile';
import {
  platformEnv,
  type DeploymentSpec,
  type K8sObject,
  type KubernetesRunnerSettings,
} from './objects';

/**
 * A service's own Dockerfile built on the cluster by kaniko (docs/kubernetes-runner.md, "A
 * repository's own Dockerfile"), with no way from the build's pod to the registry or the platform:
 * the platform reads the Dockerfile from the checkout, pins each FROM to a base image of its
 * registry and pushes the build's own image (kaniko's image; each base image as an archive in
 * kaniko's cache; the pinned Dockerfile; the checkout). The Job runs kaniko as uid 0 of a user
 * namespace of the pod's own (`hostUsers: false`) with six capabilities of that namespace, and
 * kaniko writes the image as an archive, which the platform copies out through the API server
 * (build-output.ts) and pushes (app-images.ts).
 */

const KANIKO = '/kaniko';
const BUSYBOX = `${KANIKO}/busybox`;
const CONTEXT = `${KANIKO}/context`;
const CACHE = `${KANIKO}/cache`;
const DOCKERFILE = `${KANIKO}/Dockerfile`;
const OUT = `${KANIKO}/out`;
const IMAGE_ARCHIVE = `${OUT}/image.tar`;
const EXIT_FILE = `${OUT}/exit`;
const COLLECTED_FILE = `${OUT}/collected`;

/** A Dockerfile longer than this is refused (it is read into memory). */
const MAX_DOCKERFILE_BYTES = 1024 * 1024;

/**
 * What kaniko needs of root, in its own user namespace only: unpacking files with their owners
 * and modes, and running RUN steps as the Dockerfile's USER (without them: `chown /home/node:
 * operation not permitted`). Pod Security `baseline` admits them; `restricted` admits none.
 */
export const DOCKERFILE_BUILD_CAPABILITIES = [
  'CHOWN',
  'DAC_OVERRIDE',
  'FOWNER',
  'FSETID',
  'SETUID',
  'SETGID',
];

/** kaniko's container, as the platform reads its end (builds.ts). */
export const DOCKERFILE_BUILD: BuildContainer = {
  exitStatus: [BUSYBOX, 'sh', '-c', `${BUSYBOX} cat ${EXIT_FILE} 2>/dev/null || true`],
  result: [BUSYBOX, 'cat', IMAGE_ARCHIVE],
  collected: [BUSYBOX, 'touch', COLLECTED_FILE],
};

/** The Dockerfile at `file` of the checkout `dir`, never a file outside it; or the problem. */
async function readDockerfile(dir: string, file: string): Promise<string | { problem: string }> {
  const root = await realpath(dir);
  const target = path.join(root, file);
  const real = await realpath(target).catch(() => null);
  if (!real) return { problem: `the Dockerfile ${file} is not in the repository` };
  if (!real.startsWith(`${root}${path.sep}`)) {
    return { problem: `the Dockerfile ${file} is a link out of the repository` };
  }
  const info = await lstat(real);
  if (!info.isFile()) return { problem: `the Dockerfile ${file} is not a file` };
  if (info.size > MAX_DOCKERFILE_BYTES) {
    return { problem: `the Dockerfile ${file} is over ${MAX_DOCKERFILE_BYTES} bytes` };
  }
  return readFile(real, 'utf8');
}

/**
 * Pushes the build's own image `<registry>/builds/<serviceId>:<deploymentId>` for the service's
 * Dockerfile in the checkout `dir`; its digest reference, or why it cannot be built.
 */
export async function pushDockerfileContext(
  registry: Registry,
  settings: KubernetesRunnerSettings,
  spec: DeploymentSpec & { dockerfilePath: string },
  dir: string,
): Promise<{ image: string } | { problem: string }> {
  const dockerfile = await readDockerfile(dir, spec.dockerfilePath);
  if (typeof dockerfile !== 'string') return dockerfile;
  const bases = baseImagesOf(dockerfile, registry.host);
  if ('problem' in bases) return bases;
  const pins = new Map<string, string>();
  const files: [string, Buffer][] = [];
  for (const [named, { repository, reference }] of bases.images) {
    const separator = reference.startsWith('sha256:') ? '@' : ':';
    const pinned = await registry
      .pinned(`${registry.host}/${repository}${separator}${reference}`)
      .catch((err: unknown) => (err instanceof RegistryError ? null : Promise.reject(err)));
    if (!pinned) return { problem: `FROM ${named}: no such image in the platform's registry` };
    const digest = pinned.slice(pinned.indexOf('@') + 1);
    if (!pins.has(named) && !files.some(([name]) => name.endsWith(digest))) {
      const { archive, manifest } = await imageArchive(registry, pinned);
      files.push([`${CACHE.slice(1)}/${digest}`, archive]);
      files.push([`${CACHE.slice(1)}/${digest}.json`, manifest]);
    }
    pins.set(named, pinned);
  }
  files.push([DOCKERFILE.slice(1), Buffer.from(pinBaseImages(dockerfile, pins))]);
  const image = await registry.appendImage(
    settings.kanikoImage,
    `builds/${spec.serviceId}`,
    spec.deploymentId,
    [await tarOf(files), await checkoutLayer(dir, CONTEXT, 0)],
    { labels: { 'platform.dev/deployment-id': spec.deploymentId } },
  );
  return { image: image.reference };
}

/**
 * kaniko's command line in its container: the image written as an archive, base images from the
 * cache only (never a registry: `--cache-repo` is what `--no-push` demands, never read), the
 * deployment's variables and `PLATFORM_*` as build arguments (ARG), taken from the container's
 * environment by the kubelet (`$(NAME)`), so that the Job's spec holds no value. The script
 * around it records the status and, after a success, waits until the platform has the archive.
 */
function kanikoCommand(settings: KubernetesRunnerSettings, spec: DeploymentSpec): string[] {
  const names = [...Object.keys(spec.variables), ...Object.keys(platformEnv(spec))];
  const context = path.posix.join(CONTEXT, spec.rootDirectory);
  const script =
    `${BUSYBOX} mkdir -p ${OUT}; "$@"; code=$?; echo "$code" > ${EXIT_FILE}; ` +
    `if [ "$code" = 0 ]; then while [ ! -e ${COLLECTED_FILE} ]; do ${BUSYBOX} sleep 0.2; done; fi; ` +
    'exit "$code"';
  return [
    ...literalCommand([
      BUSYBOX,
      'sh',
      '-c',
      script,
      'build',
      `${KANIKO}/executor`,
      `--context=dir://${context}`,
      `--dockerfile=${DOCKERFILE}`,
      '--no-push',
      `--destination=${settings.registry}/apps/${spec.serviceId}:${spec.deploymentId}`,
      `--tar-path=${IMAGE_ARCHIVE}`,
      '--cache=true',
      `--cache-dir=${CACHE}`,
      `--cache-repo=oci:${KANIKO}/layer-cache`,
      '--cache-run-layers=false',
      '--cache-copy-layers=false',
      '--log-format=text',
    ]),
    // Names are environment names (source-rules): `$(NAME)` is the kubelet's expansion.
    ...names.flatMap((name) => ['--build-arg', `${name}=$(${name})`]),
  ];
}

/**
 * kaniko's Job: its command in the build's image, in the pod's own user namespace as uid 0 with
 * only DOCKERFILE_BUILD_CAPABILITIES, RuntimeDefault seccomp and no privilege escalation.
 */
export function dockerfileJobObjects(
  settings: KubernetesRunnerSettings,
  spec: DeploymentSpec,
  contextImage: string,
): { secret: K8sObject; job: K8sObject } {
  return buildJob(settings, spec, contextImage, {
    pod: { hostUsers: false, securityContext: { seccompProfile: { type: 'RuntimeDefault' } } },
    container: {
      command: kanikoCommand(settings, spec),
      home: '/root',
      securityContext: {
        runAsUser: 0,
        runAsGroup: 0,
        runAsNonRoot: false,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'], add: DOCKERFILE_BUILD_CAPABILITIES },
        seccompProfile: { type: 'RuntimeDefault' },
      },
    },
  });
}
