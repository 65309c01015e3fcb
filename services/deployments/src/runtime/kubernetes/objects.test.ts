import {
  buildObjects,
  buildOutcome,
  dockerfileOf,
  releaseObjects,
  rolloutOutcome,
  type K8sObject,
} from './objects';
import { sampleDeployment, sampleRunnerSettings } from '../../test/kubernetes-samples';

const settings = sampleRunnerSettings;
const spec = sampleDeployment;

const byKind = (objects: K8sObject[], kind: string) => objects.find((o) => o.kind === kind)!;

describe('the Kubernetes runner objects', () => {
  it('keeps the variables out of every object but the Secret', () => {
    const objects = [...buildObjects(settings, spec()), ...releaseObjects(settings, spec())];
    const elsewhere = objects.filter((o) => o.kind !== 'Secret').map((o) => JSON.stringify(o));
    for (const text of elsewhere) expect(text).not.toContain('tok-secret-123');
    const secrets = objects.filter((o) => o.kind === 'Secret').map((o) => JSON.stringify(o));
    expect(secrets.every((text) => text.includes('tok-secret-123'))).toBe(true);
  });

  it('quotes values for the shell that sources them in the build', () => {
    const { env } = byKind(buildObjects(settings, spec()), 'Secret').stringData as { env: string };
    expect(env).toContain(`GREETING='it'\\''s me'\n`);
    expect(env).toContain(`PLATFORM_COMMIT_HASH='${spec().commitHash}'\n`);
  });

  it('writes tenant commands into the Dockerfile as JSON strings, in the root directory', () => {
    const dockerfile = dockerfileOf(
      settings,
      spec({ buildCommand: 'echo "a\nb" && make', startCommand: 'node "$APP"' }),
    );
    expect(dockerfile).toContain('WORKDIR /workspace/web\n');
    expect(dockerfile).toContain(
      `RUN --mount=type=secret,id=env,uid=1000 ["sh","-c","set -a; . /run/secrets/env; set +a; echo \\"a\\nb\\" && make"]\n`,
    );
    expect(dockerfile).toContain('CMD ["sh","-c","# startCommand\\nnode \\"$APP\\""]\n');
    expect(dockerfileOf(settings, spec({ buildCommand: null, rootDirectory: '' }))).not.toMatch(
      /^RUN|WORKDIR \/workspace\/\n/m,
    );
  });

  it('never lets a command be read as an option of sh, whatever it starts with', () => {
    const dockerfile = dockerfileOf(
      settings,
      spec({ buildCommand: '-c "touch /x"', startCommand: '--rcfile /x' }),
    );
    const argv = [...dockerfile.matchAll(/(?:RUN --mount=\S+|CMD) (\[.*\])$/gm)].map(
      (match) => JSON.parse(match[1]!) as string[],
    );
    expect(argv).toHaveLength(2);
    for (const [shell, flag, script, ...rest] of argv) {
      expect([shell, flag, rest]).toEqual(['sh', '-c', []]);
      expect(script).not.toMatch(/^-/);
    }
  });

  it('fetches the repository and commit through the environment, not the script', () => {
    const job = byKind(
      buildObjects(settings, spec({ repository: 'https://x/$(rm -rf /)' })),
      'Job',
    );
    const fetch = (job as any).spec.template.spec.initContainers[0];
    expect(fetch.command[2]).not.toContain('https://x');
    expect(fetch.env).toContainEqual({ name: 'REPOSITORY', value: 'https://x/$(rm -rf /)' });
  });

  it('rolls a release out with no unavailable replica, ready on the health check', () => {
    const deployment = byKind(releaseObjects(settings, spec()), 'Deployment') as any;
    expect(deployment.spec.strategy.rollingUpdate).toEqual({ maxUnavailable: 0, maxSurge: 1 });
    expect(deployment.spec.template.spec.containers[0].readinessProbe.httpGet).toEqual({
      path: '/healthz',
      port: 8080,
    });
    const ingress = byKind(releaseObjects(settings, spec()), 'Ingress') as any;
    expect(ingress.spec.rules[0].host).toBe(`${spec().serviceId}.apps.example.com`);
  });
});

describe('rolloutOutcome', () => {
  const deployment = (status: object, generation = 2) => ({
    metadata: { generation },
    spec: { replicas: 1 },
    status: { observedGeneration: 2, ...status },
  });

  it.each([
    [
      'the controller has not seen the change',
      deployment({ replicas: 1, updatedReplicas: 1, availableReplicas: 1 }, 3),
      'DEPLOYING',
    ],
    [
      'the new pod is not ready yet, the old one serves',
      deployment({ replicas: 2, updatedReplicas: 1, availableReplicas: 1 }),
      'DEPLOYING',
    ],
    [
      'the new pod is ready, the old one still terminating',
      deployment({ replicas: 2, updatedReplicas: 1, availableReplicas: 2 }),
      'DEPLOYING',
    ],
    [
      'only the new pod is left, available',
      deployment({ replicas: 1, updatedReplicas: 1, availableReplicas: 1 }),
      'DEPLOYED',
    ],
    [
      'the progress deadline passed',
      deployment({
        replicas: 2,
        updatedReplicas: 1,
        availableReplicas: 1,
        conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' }],
      }),
      'FAILED',
    ],
  ])('is %s → %s', (_what, object, outcome) => {
    expect(rolloutOutcome(object)).toBe(outcome);
  });
});

describe('buildOutcome', () => {
  it.each([
    [{}, { state: 'running' }],
    [{ conditions: [{ type: 'Complete', status: 'True' }] }, { state: 'succeeded' }],
    [
      { conditions: [{ type: 'Failed', status: 'True', reason: 'DeadlineExceeded' }] },
      { state: 'failed', reason: 'DeadlineExceeded' },
    ],
  ])('reads %j', (status, outcome) => {
    expect(buildOutcome({ status })).toEqual(outcome);
  });
});
