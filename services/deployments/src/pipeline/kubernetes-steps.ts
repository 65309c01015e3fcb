import { mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import type { LocalSourcePolicy, SecretBox } from '@platform/shared';
import type { Deployment } from '../deployments/deployments.repository';
import type { AppImages } from '../runtime/kubernetes/app-images';
import { checkoutLayer, pushBuildContext } from '../runtime/kubernetes/build-job';
import { pushDockerfileContext } from '../runtime/kubernetes/dockerfile-job';
import type { BuildResult, KubernetesBuilds } from '../runtime/kubernetes/builds';
import type { DeploymentSpec, KubernetesRunnerSettings } from '../runtime/kubernetes/objects';
import type { KubernetesReleases, Release, RolloutResult } from '../runtime/kubernetes/releases';
import type { Registry } from '@platform/kube';
import type { SourceSnapshots } from '../source/snapshot';
import { openSource, secretValuesOf, type OpenedSource } from './deployment-source';
import { fetchSource } from './fetch-source';
import { generationOf } from './promotion';
import type { AppLogs } from '../runtime/app-logs';
import { followReleaseLog } from './release-log-follower';
import { SecretMask } from './secret-mask';
import type { DeploymentSteps, StepContext, StepOutcome } from './deployment-steps';

/**
 * The steps on Kubernetes (docs/kubernetes-runner.md): the build fetches the commit here (its
 * URL checks apply), pushes the checkout as the build's context image and runs `buildCommand` in
 * a Job, whose output streams into the log; what it built becomes the app's image, kept for a
 * rollback. The deploy applies the service's Deployment with that image (newest wins) and waits
 * for its rollout; a failed one puts the previous release back.
 */

export interface KubernetesStepsOptions {
  settings: KubernetesRunnerSettings;
  registry: Registry;
  builds: KubernetesBuilds;
  releases: KubernetesReleases;
  images: AppImages;
  snapshots: SourceSnapshots;
  secretBox: SecretBox;
  /** The deployment whose release serves the service now (the repository's latestDeployed). */
  liveDeploymentOf(serviceId: string): Promise<Deployment | null>;
  /** SOURCE_ALLOW_LOCAL, with the platform's own trees (localSourcePolicy). */
  sources: LocalSourcePolicy;
  /** SOURCE_FETCH_TIMEOUT. */
  fetchTimeoutMs: number;
  /** Where a checkout is made before it is pushed (removed after). */
  checkoutsDir: string;
  /** The apps' output (KubernetesAppLogs): a release is its deployment's id. */
  appLogs: AppLogs;
  /** How often a starting app's output is copied into the deployment's log. */
  logPollMs: number;
  /** Until the service's URL goes to this release's pods only (release-routed.ts). */
  releaseRouted(spec: DeploymentSpec, signal: AbortSignal): Promise<boolean>;
}

const failed = (reason: string): StepOutcome => ({ ok: false, reason });

/** What the runner's objects say of a deployment: its snapshot, secrets opened. */
export function specOf(d: Deployment, source: OpenedSource): DeploymentSpec {
  return {
    deploymentId: d.id,
    serviceId: d.serviceId,
    projectId: d.projectId,
    accountId: d.accountId,
    commitHash: d.commitHash,
    repository: source.repository ?? '',
    branch: source.branch,
    rootDirectory: source.rootDirectory,
    buildCommand: source.buildCommand,
    startCommand: source.startCommand,
    healthCheckPath: source.healthCheckPath,
    variables: Object.fromEntries(source.variables.map((v) => [v.name, v.value])),
    replicas: source.replicas,
    dockerfilePath: source.dockerfilePath,
  };
}

/** The last line of a build Job that did not succeed (`what` ran: the build command…). */
function buildJobFailure(result: BuildResult, timeoutSeconds: number, what: string): string {
  if (result.state === 'cancelled') return 'The build step was stopped.';
  if (result.reason === 'DeadlineExceeded') {
    return `${what} ran longer than ${timeoutSeconds} s and was stopped.`;
  }
  if (result.evicted !== undefined) {
    return `${what} was stopped: it wrote more than the build's disk limit (BUILD_DISK_BYTES). ${result.evicted}`;
  }
  return result.exitCode !== undefined
    ? `${what} failed with exit code ${result.exitCode}.`
    : `The build failed (${result.reason ?? 'no reason given'}).`;
}

export class KubernetesSteps implements DeploymentSteps {
  constructor(private readonly options: KubernetesStepsOptions) {}

  async build(context: StepContext): Promise<StepOutcome> {
    const { deployment: d } = context;
    const source = await openSource(d, this.options.snapshots, this.options.secretBox);
    if (!source) return failed('The deployment has no source snapshot.');
    if (typeof source === 'string') return failed(source);
    if (source.buildOf) {
      const kept = await this.options.images.find(d.serviceId, source.buildOf);
      if (!kept) return failed(`The build of deployment ${source.buildOf} is no longer kept.`);
      context.line(
        `==> reusing the image of deployment ${source.buildOf} (${kept}): nothing is built`,
      );
      return { ok: true };
    }
    if (!source.repository) return failed('the service has no repository');
    const dir = await mkdtemp(path.join(this.options.checkoutsDir, `${d.id}-`));
    try {
      return await this.buildIn(dir, context, source, source.repository);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  /** Fetches the commit into `dir`, builds it in a Job, pushes the app's image. */
  private async buildIn(
    dir: string,
    context: StepContext,
    source: OpenedSource,
    repository: string,
  ): Promise<StepOutcome> {
    const { deployment: d } = context;
    const { images, settings } = this.options;
    const unfetched = await fetchSource(context, { ...source, repository }, dir, this.options);
    if (unfetched) return failed(unfetched);
    const spec = specOf(d, source);
    if (spec.dockerfilePath) {
      return this.buildDockerfile(spec, spec.dockerfilePath, dir, context, source);
    }
    let workspace: Buffer;
    if (source.buildCommand) {
      context.line(`==> running the build command in a Job: ${source.buildCommand}`);
      const contextImage = await pushBuildContext(this.options.registry, settings, spec, dir);
      const built = await this.followJob(spec, contextImage, context, source);
      if (built.state !== 'succeeded' || !built.workspace) {
        return failed(buildJobFailure(built, settings.build.timeoutSeconds, 'The build command'));
      }
      workspace = built.workspace;
    } else {
      context.line('==> no build command: the checkout is the build');
      workspace = await checkoutLayer(dir);
    }
    return this.keep(spec, await images.push(spec, workspace), context);
  }

  /** The service's Dockerfile built by kaniko in a Job; the image it wrote pushed and kept. */
  private async buildDockerfile(
    spec: DeploymentSpec,
    dockerfilePath: string,
    dir: string,
    context: StepContext,
    source: OpenedSource,
  ): Promise<StepOutcome> {
    const { images, registry, settings } = this.options;
    context.line(`==> building the Dockerfile ${dockerfilePath} with kaniko in a Job`);
    const pushed = await pushDockerfileContext(
      registry,
      settings,
      { ...spec, dockerfilePath },
      dir,
    );
    if ('problem' in pushed) return failed(`The Dockerfile cannot be built: ${pushed.problem}.`);
    const built = await this.followJob(spec, pushed.image, context, source);
    if (built.state !== 'succeeded' || !built.workspace) {
      return failed(
        buildJobFailure(built, settings.build.timeoutSeconds, "The Dockerfile's build"),
      );
    }
    return this.keep(spec, await images.pushArchive(spec, built.workspace), context);
  }

  /** Says which image was pushed and deletes the service's images beyond the kept ones. */
  private async keep(
    spec: DeploymentSpec,
    image: string,
    context: StepContext,
  ): Promise<StepOutcome> {
    const { images } = this.options;
    const d = context.deployment;
    context.line(`==> the app's image: ${image}`);
    const live = await this.liveRelease(d.serviceId);
    const removed = await images.prune(d.serviceId, [d.id, ...(live ? [live.buildId] : [])]);
    if (removed.length > 0) context.line(`==> older images deleted: ${removed.join(', ')}`);
    return { ok: true };
  }

  /** Runs the build Job on `contextImage`, its output masked into the log; cancel deletes it. */
  private async followJob(
    spec: DeploymentSpec,
    contextImage: string,
    context: StepContext,
    source: OpenedSource,
  ): Promise<BuildResult> {
    const { builds, images } = this.options;
    const cancel = () => void builds.cancel(spec).catch(() => undefined);
    context.signal.addEventListener('abort', cancel, { once: true });
    try {
      if (context.signal.aborted) return { state: 'cancelled' };
      await builds.start(spec, contextImage);
      const mask = new SecretMask(secretValuesOf(source));
      const result = await builds.follow(spec, (text) => context.output(mask.write(text)));
      context.output(mask.flush());
      if (result.logError) context.line(result.logError);
      return context.signal.aborted ? { state: 'cancelled' } : result;
    } finally {
      context.signal.removeEventListener('abort', cancel);
      await images.removeContext(spec).catch(() => undefined);
    }
  }

  async deploy(context: StepContext): Promise<StepOutcome> {
    const { deployment: d, signal } = context;
    const { releases, images } = this.options;
    const source = await openSource(d, this.options.snapshots, this.options.secretBox);
    if (!source) return failed('The deployment has no source snapshot.');
    if (typeof source === 'string') return failed(source);
    const image = await images.find(d.serviceId, source.buildOf ?? d.id);
    if (!image) return failed('The build of this deployment is no longer kept.');
    const release: Release = { spec: specOf(d, source), image, generation: generationOf(d) };
    const live = await this.liveRelease(d.serviceId);
    const previous = live && live.release.spec.deploymentId !== d.id ? live.release : null;

    context.line(
      `==> releasing ${image}: ${release.spec.replicas ?? 1} ready on GET ${release.spec.healthCheckPath}`,
    );
    const applied = await releases.applyNewest(release);
    if (!applied.applied) {
      return failed(`The app was not made live: a newer deployment (${applied.newer}) is live.`);
    }
    // What the app prints as it starts goes into the log; the release's id is the deployment's.
    const mask = new SecretMask(secretValuesOf(source));
    const following = followReleaseLog(
      this.options.appLogs,
      d.id,
      (text) => context.output(mask.write(text)),
      this.options.logPollMs,
    );
    try {
      const result = await this.rollout(release, signal);
      if (result === 'stopped') {
        if (!context.runsAgain() && previous) await releases.revert(release, previous);
        return failed('The deploy step was stopped.');
      }
      if (result.outcome === 'FAILED') {
        const reverted = previous && (await releases.revert(release, previous));
        if (reverted) context.line(`==> deployment ${previous.spec.deploymentId} serves again`);
        return failed(`The app did not become healthy: ${result.reason ?? 'its rollout failed'}.`);
      }
      if (!(await this.options.releaseRouted(release.spec, signal))) {
        context.line('==> the router did not see only this release within 30 s of its rollout');
      }
      const offset = await following.stop();
      context.output(mask.flush());
      context.line(
        previous
          ? `==> the service's URL now serves this deployment; the previous one (${previous.spec.deploymentId}) is stopped`
          : `==> the service's URL now serves this deployment`,
      );
      return { ok: true, releaseLog: { releaseId: d.id, offset } };
    } finally {
      await following.stop();
      context.output(mask.flush());
    }
  }

  /** The rollout's verdict, or 'stopped' when the run is interrupted first. */
  private async rollout(release: Release, signal: AbortSignal): Promise<RolloutResult | 'stopped'> {
    try {
      return await this.options.releases.watchRollout(release.spec, signal);
    } catch (err) {
      if (signal.aborted) return 'stopped';
      throw err;
    }
  }

  /** The release serving the service (its deployment, its image's build), if any. */
  private async liveRelease(
    serviceId: string,
  ): Promise<{ release: Release; buildId: string } | null> {
    const live = await this.options.liveDeploymentOf(serviceId);
    if (!live) return null;
    const source = await openSource(live, this.options.snapshots, this.options.secretBox);
    if (!source || typeof source === 'string') return null;
    const buildId = source.buildOf ?? live.id;
    const image = await this.options.images.find(serviceId, buildId);
    if (!image) return null;
    return {
      release: { spec: specOf(live, source), image, generation: generationOf(live) },
      buildId,
    };
  }
}
