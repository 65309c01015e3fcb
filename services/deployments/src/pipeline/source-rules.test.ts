// The deployments service checks the source snapshot again (libs/shared source-rules) before any
// of it reaches git, the sandbox or the runtime: a projects service that let a bad field through
// (the stub here answers whatever it is given) makes the deployment FAILED, the log naming the
// field, with nothing fetched, built or started.
import { useHarness } from '../test/harness';
import type { StubSource } from '../test/projects-stub';

const h = useHarness({ pipeline: {} });

const SLOW = 30_000;
const REFUSED = "The service's source is refused: ";

/** What a case is called, the source the projects stub answers, what the log says is refused. */
type Refusal = [string, Partial<StubSource>, string];

describe('a source snapshot that breaks the rules', () => {
  /** A field of the source with a value it refuses: the log names the field. */
  const fieldCases: [string, keyof StubSource, string][] = [
    ['a branch with a leading dash', 'branch', '-x'],
    ['a branch that is a git option', 'branch', '--upload-pack=touch /tmp/x'],
    ['a branch with NUL', 'branch', 'main\u0000--upload-pack=x'],
    ['a branch with a newline', 'branch', 'main\nx'],
    ['a repository with NUL', 'repository', 'file:///srv/a.git\u0000x'],
    ['a repository with a newline', 'repository', 'file:///srv/a\n.git'],
    ['a repository that is a git option', 'repository', '--upload-pack=x'],
    ['a root directory with NUL', 'rootDirectory', 'a\u0000--bind'],
    ['a root directory with a newline', 'rootDirectory', 'a\nb'],
    ['a root directory that climbs out', 'rootDirectory', 'a/../..'],
    ['a build command with NUL', 'buildCommand', 'true\u0000--ro-bind'],
    ['a build command with a carriage return', 'buildCommand', 'true\r'],
    ['a start command with NUL', 'startCommand', 'node\u0000--bind'],
    ['a health check path with NUL', 'healthCheckPath', '/h\u0000'],
    [
      'a health check path that splits the request',
      'healthCheckPath',
      '/h HTTP/1.1\r\nX-Injected: 1',
    ],
    ['a health check path with a leading dash', 'healthCheckPath', '-h'],
  ];
  /** A variable name it refuses, the only variable: the log names its place. */
  const nameCases: [string, string, string][] = [
    ['a variable name with NUL', 'X\u0000--ro-bind', 'variable 1 (name): '],
    ['a variable name with a newline', 'X\nY', 'variable 1 (name): '],
    ['a variable name with a leading dash', '--bind', 'variable 1 (name): '],
    ['a reserved variable name', 'PORT', 'variable 1 PORT (name): '],
  ];
  const cases: Refusal[] = [
    ...fieldCases.map(([what, field, value]): Refusal => [what, { [field]: value }, `${field}: `]),
    ...nameCases.map(([what, name, said]): Refusal => [
      what,
      { variables: [{ name, value: 'x' }] },
      said,
    ]),
    ['replicas over 10', { replicas: 11 }, 'replicas: must be at most 10'],
    ['replicas of 0', { replicas: 0 }, 'replicas: must be at least 1'],
    ['replicas not a whole number', { replicas: 1.5 }, 'replicas: must be a whole number'],
    [
      'a Dockerfile path that climbs out',
      { dockerfilePath: 'a/../../Dockerfile' },
      'dockerfilePath: must stay inside the repository (no ..)',
    ],
    [
      'an absolute Dockerfile path',
      { dockerfilePath: '/etc/passwd' },
      'dockerfilePath: must be relative to the repository (no leading /), without control characters or backslashes',
    ],
    [
      'a variable value with NUL (the issue’s sandbox option)',
      { variables: [{ name: 'X', value: 'x\u0000--ro-bind\u0000/\u0000/host' }] },
      'variable 1 X (value): must not contain the NUL character',
    ],
    [
      'a secret variable value with NUL',
      {
        variables: [
          { name: 'A', value: 'ok' },
          { name: 'X', value: 'x\u0000--bind', secret: true },
        ],
      },
      'variable 2 X (value): must not contain the NUL character',
    ],
  ];

  it.each(cases)(
    'fails it with %s, saying which field, before fetching',
    async (_case, source, said) => {
      const { service, id } = await h.newDeployment({}, source);

      const failed = await h.waitForStatus(service, id, 'FAILED', SLOW);

      const logs: string = failed.logs;
      expect(logs).toContain(`${REFUSED}${said}`);
      expect(logs).not.toContain('==> fetching commit');
      // The refusal is one line: a NUL or a newline of the field never reaches the log.
      const refusal = logs.split('\n').find((line) => line.includes(REFUSED))!;
      expect(refusal).not.toContain('\u0000');
      expect(logs).not.toMatch(/\r/);
      expect(await h.builds.find({ ...service, deploymentId: id })).toBeNull();
    },
  );

  it('runs a command that starts with a dash as a script, not as an option of the shell', async () => {
    const { service, id } = await h.newDeployment(
      {},
      { buildCommand: '-x 2>/dev/null\necho ran-as-a-script\nnode build.js' },
    );

    const deployed = await h.waitForStatus(service, id, 'DEPLOYED', SLOW);

    expect(deployed.logs).toContain('ran-as-a-script');
    // `sh -c -x` would have traced every command it ran.
    expect(deployed.logs).not.toContain('+ echo ran-as-a-script');
  });
});
