import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  CHECKER_BUILD_TIMEOUT_MS,
  describeProblems,
  loadCompose,
  loadDockerfile,
  manifestChecker,
  renderKustomization,
} from './checker';

/** A small valid Deployment, to break one thing at a time. */
function deployment(): any {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'demo', labels: { app: 'demo' } },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'demo' } },
      template: {
        metadata: { labels: { app: 'demo' } },
        spec: { containers: [{ name: 'demo', image: 'example/demo:1.0.0' }] },
      },
    },
  };
}

let workDir: string;

/** Writes a kustomization of `objects` into a temporary directory and renders it. */
async function renderObjects(objects: unknown[], kustomization: Record<string, unknown> = {}) {
  const dir = fs.mkdtempSync(path.join(workDir, 'kustomization-'));
  const resources = objects.map((object, i) => {
    // JSON is YAML: no YAML library needed to write manifests.
    fs.writeFileSync(path.join(dir, `object-${i}.yaml`), JSON.stringify(object, null, 2));
    return `object-${i}.yaml`;
  });
  fs.writeFileSync(
    path.join(dir, 'kustomization.yaml'),
    JSON.stringify({ namespace: 'demo', resources, ...kustomization }),
  );
  return renderKustomization(dir);
}

async function loadDockerfileText(
  text: string,
  args: Record<string, string> = {},
  target?: string,
) {
  const file = path.join(fs.mkdtempSync(path.join(workDir, 'dockerfile-')), 'Dockerfile');
  fs.writeFileSync(file, text);
  return loadDockerfile(file, args, target);
}

async function loadComposeText(text: string, env: Record<string, string> = {}) {
  const file = path.join(fs.mkdtempSync(path.join(workDir, 'compose-')), 'compose.yaml');
  fs.writeFileSync(file, text);
  return loadCompose(file, env);
}

beforeAll(async () => {
  await manifestChecker();
  workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'manifest-check-'));
}, CHECKER_BUILD_TIMEOUT_MS);

afterAll(() => {
  fs.rmSync(workDir, { recursive: true, force: true });
});

describe('the Kubernetes checker', () => {
  it('accepts a small valid Deployment', async () => {
    const result = await renderObjects([deployment()]);
    expect(describeProblems(result.problems)).toBe('');
    expect(result.objects).toHaveLength(1);
  });

  it('rejects an unknown field (a misspelt replicas)', async () => {
    const broken = deployment();
    broken.spec.replica = 2;
    const { problems } = await renderObjects([broken]);
    expect(describeProblems(problems)).toMatch(/unknown field "spec.replica"/);
  });

  it('rejects a field of the wrong type', async () => {
    const broken = deployment();
    broken.spec.replicas = 'two';
    const { problems } = await renderObjects([broken]);
    expect(describeProblems(problems)).toMatch(/does not decode/);
  });

  it('rejects a Deployment whose selector does not match its pod labels', async () => {
    const broken = deployment();
    broken.spec.template.metadata.labels = { app: 'other' };
    const { problems } = await renderObjects([broken]);
    expect(describeProblems(problems)).toMatch(/`selector` does not match template `labels`/);
  });

  it('rejects a container without an image and a probe without a handler', async () => {
    const broken = deployment();
    delete broken.spec.template.spec.containers[0].image;
    broken.spec.template.spec.containers[0].readinessProbe = { periodSeconds: 5 };
    const { problems } = await renderObjects([broken]);
    const text = describeProblems(problems);
    expect(text).toMatch(/containers\[0\]\.image: Required value/);
    expect(text).toMatch(/readinessProbe: Required value: must specify a handler type/);
  });

  it('rejects a NetworkPolicy with an invalid CIDR', async () => {
    const { problems } = await renderObjects([
      {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'NetworkPolicy',
        metadata: { name: 'bad', labels: { app: 'demo' } },
        spec: { podSelector: {}, egress: [{ to: [{ ipBlock: { cidr: '10.0.0.0/33' } }] }] },
      },
    ]);
    expect(describeProblems(problems)).toMatch(/cidr/);
  });

  it('rejects an autoscaler whose minimum exceeds its maximum', async () => {
    const { problems } = await renderObjects([
      {
        apiVersion: 'autoscaling/v2',
        kind: 'HorizontalPodAutoscaler',
        metadata: { name: 'demo' },
        spec: {
          scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'demo' },
          minReplicas: 5,
          maxReplicas: 2,
        },
      },
    ]);
    expect(describeProblems(problems)).toMatch(/maxReplicas/);
  });

  it('rejects a Role rule without verbs and a binding to a role without a name', async () => {
    const { problems } = await renderObjects([
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: 'demo' },
        rules: [{ apiGroups: [''], resources: ['pods'], verbs: [] }],
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'demo' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: '' },
        subjects: [{ kind: 'ServiceAccount', name: 'demo', namespace: 'demo' }],
      },
    ]);
    const text = describeProblems(problems);
    expect(text).toMatch(/Role\/demo\/demo: rules\[0\]\.verbs: Required value/);
    expect(text).toMatch(/ClusterRoleBinding\/demo: roleRef\.name: Required value/);
  });

  it('compiles an admission policy’s CEL: an unknown field of the request is refused', async () => {
    const { problems } = await renderObjects([
      {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingAdmissionPolicy',
        metadata: { name: 'demo' },
        spec: {
          matchConstraints: {
            resourceRules: [
              {
                apiGroups: [''],
                apiVersions: ['*'],
                resources: ['secrets'],
                operations: ['CREATE'],
              },
            ],
          },
          validations: [{ expression: "request.namespaec == 'demo'" }],
        },
      },
    ]);
    expect(describeProblems(problems)).toMatch(
      /compilation failed: .*undefined field 'namespaec'/s,
    );
  });

  it('rejects a RuntimeClass whose handler is not a DNS label', async () => {
    const { problems } = await renderObjects([
      {
        apiVersion: 'node.k8s.io/v1',
        kind: 'RuntimeClass',
        metadata: { name: 'gvisor' },
        handler: 'run_sc',
      },
    ]);
    expect(describeProblems(problems)).toMatch(/handler: Invalid value: "run_sc"/);
  });

  it('rejects a kind it does not know', async () => {
    const { problems } = await renderObjects([
      { apiVersion: 'apps/v1', kind: 'Deploymnet', metadata: { name: 'typo' } },
    ]);
    expect(describeProblems(problems)).toMatch(/Deploymnet/);
  });

  it('rejects a kustomization that does not build', async () => {
    const { problems, objects } = await renderObjects([deployment()], {
      patches: [{ path: 'missing-patch.yaml' }],
    });
    expect(objects).toEqual([]);
    expect(describeProblems(problems)).toMatch(/kustomize build failed/);
  });
});

describe('the Compose checker', () => {
  it('accepts a small valid file', async () => {
    const { problems } = await loadComposeText('services:\n  web:\n    image: nginx:1\n');
    expect(problems).toEqual([]);
  });

  it('rejects an attribute the Compose specification does not have', async () => {
    const { problems } = await loadComposeText(
      'services:\n  web:\n    image: nginx:1\n    healthchek:\n      test: ["CMD", "true"]\n',
    );
    expect(describeProblems(problems)).toMatch(/healthchek/);
  });

  it('rejects a value of the wrong type', async () => {
    const { problems } = await loadComposeText(
      'services:\n  web:\n    image: nginx:1\n    ports: 8080\n',
    );
    expect(describeProblems(problems)).toMatch(/ports/);
  });

  it('rejects a dependency on a service that does not exist', async () => {
    const { problems } = await loadComposeText(
      'services:\n  web:\n    image: nginx:1\n    depends_on:\n      db:\n        condition: service_healthy\n',
    );
    expect(describeProblems(problems)).toMatch(/db/);
  });

  it('reports a ${VARIABLE} without a default that would silently be empty', async () => {
    const text = 'services:\n  web:\n    image: nginx:1\n    environment:\n      TOKEN: ${TOKEN}\n';
    expect(describeProblems((await loadComposeText(text)).problems)).toMatch(/\$\{TOKEN\}/);
    expect((await loadComposeText(text, { TOKEN: 'set' })).problems).toEqual([]);
  });
});

describe('the Dockerfile checker', () => {
  const valid = [
    'ARG BASE=debian:bookworm-slim',
    'FROM ${BASE} AS build',
    'RUN echo built > /out',
    'FROM ${BASE} AS final',
    'COPY --from=build /out /out',
    'ARG PORT',
    'EXPOSE ${PORT}',
    'USER nobody',
    'CMD ["cat", "/out"]',
    '',
  ].join('\n');

  it('accepts a small valid file and reports its stages, arguments, base images and image', async () => {
    const result = await loadDockerfileText(valid, { PORT: '8080' });
    expect(describeProblems(result.problems)).toBe('');
    expect(result.warnings).toEqual([]);
    expect(result.stages.map((s) => [s.name, s.default])).toEqual([
      ['build', false],
      ['final', true],
    ]);
    expect(result.target).toBe('final');
    expect(result.args.map((a) => [a.name, a.value])).toEqual([
      ['BASE', 'debian:bookworm-slim'],
      ['PORT', '8080'],
    ]);
    expect(result.baseImages).toEqual(['docker.io/library/debian:bookworm-slim']);
    expect(result.image).toMatchObject({
      User: 'nobody',
      Cmd: ['cat', '/out'],
      ExposedPorts: { '8080/tcp': {} },
    });
  });

  it('reports the build checks of `docker build --check`', async () => {
    const { warnings } = await loadDockerfileText(
      'FROM debian:bookworm-slim as base\nWORKDIR /app/$UNDECLARED\nCMD node main.js\n',
    );
    expect(warnings.map((w) => [w.rule, w.line])).toEqual([
      ['FromAsCasing', 1],
      ['UndefinedVar', 2],
      ['JSONArgsRecommended', 3],
    ]);
  });

  it('rejects a target that does not exist and an instruction BuildKit does not accept', async () => {
    const missing = await loadDockerfileText(valid, {}, 'runtime');
    expect(describeProblems(missing.problems)).toMatch(/target stage "runtime" could not be found/);
    const broken = await loadDockerfileText(
      'FROM debian:bookworm-slim\nRUN --mount=type=bogus true\n',
    );
    expect(describeProblems(broken.problems)).toMatch(/unsupported mount type "bogus"/);
  });
});
