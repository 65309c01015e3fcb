import { Writable } from 'node:stream';
import { k8s, type Kubernetes } from '@platform/kube';

/**
 * How a finished build becomes the app's image without its pod reaching the platform, the host or
 * the registry: the build's container runs the build command under a fixed script that records
 * the exit status and, on success, waits; the platform reads the status and copies the built
 * workspace out through the API server (`exec tar`, the kubelet's stream), then lets the
 * container end. The platform pushes base image + workspace itself (builds.ts).
 */

/** Where the checkout is in the build context (the base image's user owns it), and the build. */
export const WORKSPACE = '/home/node/workspace';

const EXIT_FILE = '/tmp/.platform-build-exit';
const COLLECTED_FILE = '/tmp/.platform-build-collected';

/**
 * The build container's command: the tenant's build command is `$1` of a fixed script, never part
 * of it, and after `--` (a command starting with `-` is a script, not an option of sh).
 */
export function buildContainerCommand(buildCommand: string): string[] {
  const script =
    'sh -c -- "$1"; code=$?; echo "$code" > ' +
    EXIT_FILE +
    '; if [ "$code" = 0 ]; then while [ ! -e ' +
    COLLECTED_FILE +
    ' ]; do sleep 0.2; done; fi; exit "$code"';
  return ['sh', '-c', script, 'build', buildCommand];
}

function collector(): { stream: Writable; bytes: () => Buffer } {
  const chunks: Buffer[] = [];
  return {
    stream: new Writable({
      write(chunk: Buffer, _encoding, done) {
        chunks.push(chunk);
        done();
      },
    }),
    bytes: () => Buffer.concat(chunks),
  };
}

/** Runs `command` in the build container; its stdout, or throws with its stderr and status. */
export function execIn(
  kc: Kubernetes.KubeConfig,
  namespace: string,
  pod: string,
  command: string[],
): Promise<Buffer> {
  const out = collector();
  const err = collector();
  return new Promise<Buffer>((resolve, reject) => {
    new k8s.Exec(kc)
      .exec(namespace, pod, 'build', command, out.stream, err.stream, null, false, (status) => {
        // The status arrives last, after the streams' data.
        if (status.status === 'Success') resolve(out.bytes());
        else {
          reject(
            new Error(
              `${command.join(' ')}: ${status.message ?? status.reason ?? 'failed'} ${err.bytes().toString('utf8')}`.trim(),
            ),
          );
        }
      })
      .then(
        (socket) => socket.on('error', reject),
        (error: unknown) => reject(error instanceof Error ? error : new Error(String(error))),
      );
  });
}

/**
 * How the platform reads a build container's end: the command that prints its exit status once
 * it has ended, the one whose output is the build's result, and the one that lets it end.
 */
export interface BuildContainer {
  exitStatus: string[];
  result: string[];
  collected: string[];
}

/** A build command's container (the base image's tools): the result is the workspace's tar. */
export const WORKSPACE_BUILD: BuildContainer = {
  exitStatus: ['sh', '-c', `cat ${EXIT_FILE} 2>/dev/null || true`],
  result: ['tar', '-C', '/', '-cf', '-', WORKSPACE.slice(1)],
  collected: ['touch', COLLECTED_FILE],
};

/** The build's exit status once it has ended, else null. */
export async function buildExitCode(
  kc: Kubernetes.KubeConfig,
  namespace: string,
  pod: string,
  container: BuildContainer = WORKSPACE_BUILD,
): Promise<number | null> {
  const text = (await execIn(kc, namespace, pod, container.exitStatus)).toString('utf8');
  return /^\d+\s*$/.test(text) ? Number(text) : null;
}

/**
 * What the build made (the workspace as a tar layer with paths from `/`; a Dockerfile's image
 * archive), then lets the container end.
 */
export async function collectWorkspace(
  kc: Kubernetes.KubeConfig,
  namespace: string,
  pod: string,
  container: BuildContainer = WORKSPACE_BUILD,
): Promise<Buffer> {
  const result = await execIn(kc, namespace, pod, container.result);
  await execIn(kc, namespace, pod, container.collected);
  return result;
}
