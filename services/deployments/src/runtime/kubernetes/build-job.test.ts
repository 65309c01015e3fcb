import { buildJobObjects } from './build-job';
import { buildContainerCommand } from './build-output';
import { dockerfileJobObjects } from './dockerfile-job';
import type { DeploymentSpec, K8sObject } from './objects';
import {
  sampleContextImage,
  sampleDeployment,
  sampleRunnerSettings,
} from '../../test/kubernetes-samples';

/**
 * The build Jobs as the runner makes them (build-job.ts for a build command, dockerfile-job.ts for
 * a Dockerfile): what reaches the build's container, and what never does.
 */

interface Container {
  command: string[];
  env: { name: string; value: string }[];
  envFrom: { secretRef: { name: string } }[];
}

const containerOf = (job: K8sObject) =>
  (job as unknown as { spec: { template: { spec: { containers: Container[] } } } }).spec.template
    .spec.containers[0]!;

/**
 * What the kubelet makes of a word of `command` (its `$(NAME)` expansion, as
 * k8s.io/kubernetes/third_party/forked/golang/expansion reads it): `$$` is `$`, `$(NAME)` is the
 * value of NAME in the container's environment (left as written when it has none).
 */
const kubeletExpands = (word: string, env: Record<string, string>) =>
  word.replace(/\$(\$|\(([^)]*)\))/g, (whole, next: string, name: string | undefined) =>
    next === '$' ? '$' : name !== undefined && name in env ? env[name]! : whole,
  );

/** The container's command as its process gets it: the environment from the Secret and `env`. */
function commandAsRun(secret: K8sObject, job: K8sObject): string[] {
  const container = containerOf(job);
  const env = {
    ...(secret.stringData as Record<string, string>),
    ...Object.fromEntries(container.env.map(({ name, value }) => [name, value])),
  };
  return container.command.map((word) => kubeletExpands(word, env));
}

const builders: [string, typeof buildJobObjects, DeploymentSpec][] = [
  ['a build command', buildJobObjects, sampleDeployment()],
  ['a Dockerfile', dockerfileJobObjects, sampleDeployment({ dockerfilePath: 'docker/Dockerfile' })],
];

describe.each(builders)('the build Job of %s', (_what, jobObjects, deployment) => {
  const made = (overrides: Partial<DeploymentSpec> = {}) => {
    const spec = { ...deployment, ...overrides };
    return { spec, ...jobObjects(sampleRunnerSettings, spec, sampleContextImage(spec)) };
  };

  it('keeps the variables out of the Job: the Secret its container reads holds them as written', () => {
    const { secret, job } = made();
    expect(secret.stringData).toEqual({ GREETING: "it's me", API_TOKEN: 'tok-secret-123' });
    expect(containerOf(job).envFrom).toEqual([{ secretRef: { name: secret.metadata.name } }]);
    const text = JSON.stringify(job);
    expect(text).not.toContain('tok-secret-123');
    expect(text).not.toContain("it's me");
  });

  it('holds no repository URL, so none with `$(...)` is in a command: the platform fetched it', () => {
    const { secret, job } = made({ repository: 'https://x/$(rm -rf /)' });
    expect(JSON.stringify([secret, job])).not.toContain('https://x');
  });
});

describe('what the kubelet hands a build’s process', () => {
  it('is the build command as written, `$(NAME)` and `$$` of it expanded by no one but sh', () => {
    const buildCommand = 'echo $(API_TOKEN) $$ "$HOME" $(NOT_SET)';
    const spec = sampleDeployment({ buildCommand });
    const { secret, job } = buildJobObjects(sampleRunnerSettings, spec, sampleContextImage(spec));
    expect(commandAsRun(secret, job)).toEqual(buildContainerCommand(buildCommand));
  });

  it('is kaniko’s command with the root directory as written, the variables as build arguments', () => {
    const spec = sampleDeployment({
      dockerfilePath: 'Dockerfile',
      rootDirectory: 'web/$(API_TOKEN)/$$',
    });
    const { secret, job } = dockerfileJobObjects(
      sampleRunnerSettings,
      spec,
      sampleContextImage(spec),
    );
    const argv = commandAsRun(secret, job);
    expect(argv).toContain('--context=dir:///kaniko/context/web/$(API_TOKEN)/$$');
    expect(argv.join('\n')).not.toContain('tok-secret-123/');
    const buildArgs = argv.flatMap((word, i) => (argv[i - 1] === '--build-arg' ? [word] : []));
    expect(buildArgs).toEqual([
      "GREETING=it's me",
      'API_TOKEN=tok-secret-123',
      `PLATFORM_DEPLOYMENT_ID=${spec.deploymentId}`,
      `PLATFORM_SERVICE_ID=${spec.serviceId}`,
      `PLATFORM_PROJECT_ID=${spec.projectId}`,
      `PLATFORM_COMMIT_HASH=${spec.commitHash}`,
    ]);
  });
});
