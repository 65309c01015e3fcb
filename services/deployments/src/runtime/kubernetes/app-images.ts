import path from 'node:path';
import { pushImageArchive, type Registry } from '@platform/kube';
import { WORKSPACE } from './build-output';
import type { DeploymentSpec, KubernetesRunnerSettings } from './objects';

/**
 * The images the Kubernetes runner keeps in the registry: a service's app images,
 * `apps/<serviceId>:<deploymentId>`, of which the last KEPT_IMAGES (and whatever serves) stay for
 * a rollback, which re-applies one by digest without building; and a build's context,
 * `builds/<serviceId>:<deploymentId>` (the checkout), deleted once its build is over.
 */

/** App images kept per service, as the local runtime keeps builds (README "Source and builds"). */
export const KEPT_IMAGES = 10;

/** Deployment ids are MongoDB ObjectIds: fixed-width hexadecimal, ordered by creation. */
const byAge = (a: string, b: string) => a.localeCompare(b);

export class AppImages {
  constructor(
    private readonly registry: Registry,
    private readonly settings: KubernetesRunnerSettings,
  ) {}

  /**
   * Pushes the app's image: the base image, the built workspace (a tar layer), `sh -c --
   * startCommand` in the root directory (after `--`: a command starting with `-` is a script), labelled with its deployment so that no two
   * deployments share a digest (a deleted one never takes another's tag with it).
   */
  async push(spec: DeploymentSpec, workspace: Buffer): Promise<string> {
    const image = await this.registry.appendImage(
      this.settings.baseImage,
      `apps/${spec.serviceId}`,
      spec.deploymentId,
      [workspace],
      {
        entrypoint: ['sh', '-c', '--', spec.startCommand ?? 'npm start'],
        cmd: [],
        workingDir: path.posix.join(WORKSPACE, spec.rootDirectory),
        labels: { 'platform.dev/deployment-id': spec.deploymentId },
      },
    );
    return image.reference;
  }

  /**
   * Pushes the image a Dockerfile's build wrote (an archive, as the tenant's build left it: its
   * own command and user), labelled with its deployment as `push` does.
   */
  async pushArchive(spec: DeploymentSpec, archive: Buffer): Promise<string> {
    const image = await pushImageArchive(
      this.registry,
      archive,
      `apps/${spec.serviceId}`,
      spec.deploymentId,
      { 'platform.dev/deployment-id': spec.deploymentId },
    );
    return image.reference;
  }

  /** The kept image of a deployment's build, by digest; null when it is no longer kept. */
  async find(serviceId: string, deploymentId: string): Promise<string | null> {
    const repository = `apps/${serviceId}`;
    const digest = await this.registry.resolve(repository, deploymentId);
    return digest ? `${this.registry.host}/${repository}@${digest}` : null;
  }

  /**
   * Deletes the service's app images beyond the newest KEPT_IMAGES, never one of `protect` (the
   * image that serves, the one being released). Resolves with the deployment ids deleted.
   */
  async prune(serviceId: string, protect: string[]): Promise<string[]> {
    const repository = `apps/${serviceId}`;
    const tags = (await this.registry.tags(repository)).sort(byAge);
    const old = tags.slice(0, Math.max(0, tags.length - KEPT_IMAGES));
    const removed: string[] = [];
    for (const tag of old.filter((t) => !protect.includes(t))) {
      if (await this.registry.remove(repository, tag)) removed.push(tag);
    }
    return removed;
  }

  /** Every app image of a service (its deletion). */
  async removeService(serviceId: string): Promise<void> {
    for (const repository of [`apps/${serviceId}`, `builds/${serviceId}`]) {
      for (const tag of await this.registry.tags(repository)) {
        await this.registry.remove(repository, tag);
      }
    }
  }

  /** A build's context image, once its build is over. */
  async removeContext(spec: Pick<DeploymentSpec, 'serviceId' | 'deploymentId'>): Promise<void> {
    await this.registry.remove(`builds/${spec.serviceId}`, spec.deploymentId);
  }
}
