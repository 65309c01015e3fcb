// The deployments service checks the source snapshot again (libs/shared source-rules) before any
// of it reaches git, the sandbox or the runtime: a projects service that let a bad field through
// (the stub here answers whatever it is given) makes the deployment FAILED, the log naming the
// field, with nothing fetched, built or started.
import { useHarness } from '../test/harness';
import type { StubSource } from '../test/projects-stub';

const h = useHarness({ pipeline: {} });

const SLOW = 30_000;
const REFUSED = "The service's source is refused: ";

describe('a source snapshot that breaks the rules', () => {
  it.each<[string, Partial<StubSource>, string]>([
    ['a branch with a leading dash', { branch: '-x' }, 'branch: '],
    ['a branch that is a git option', { branch: '--upload-pack=touch /tmp/x' }, 'branch: '],
    ['a branch with NUL', { branch: 'main\u0000--upload-pack=x' }, 'branch: '],
    ['a branch with a newline', { branch: 'main\nx' }, 'branch: '],
    ['a repository with NUL', { repository: 'file:///srv/a.git\u0000x' }, 'repository: '],
    ['a repository with a newline', { repository: 'file:///srv/a\n.git' }, 'repository: '],
    ['a repository that is a git option', { repository: '--upload-pack=x' }, 'repository: '],
    ['a root directory with NUL', { rootDirectory: 'a\u0000--bind' }, 'rootDirectory: '],
    ['a root directory with a newline', { rootDirectory: 'a\nb' }, 'rootDirectory: '],
    ['a root directory that climbs out', { rootDirectory: 'a/../..' }, 'rootDirectory: '],
    ['a build command with NUL', { buildCommand: 'true\u0000--ro-bind' }, 'buildCommand: '],
    ['a build command with a carriage return', { buildCommand: 'true\r' }, 'buildCommand: '],
    ['a start command with NUL', { startCommand: 'node\u0000--bind' }, 'startCommand: '],
    ['a health check path with NUL', { healthCheckPath: '/h\u0000' }, 'healthCheckPath: '],
    [
      'a health check path that splits the request',
      { healthCheckPath: '/h HTTP/1.1\r\nX-Injected: 1' },
      'healthCheckPath: ',
    ],
    ['a health check path with a leading dash', { healthCheckPath: '-h' }, 'healthCheckPath: '],
    [
      'a variable name with NUL',
      { variables: [{ name: 'X\u0000--ro-bind', value: 'x' }] },
      'variable 1 (name): ',
    ],
    [
      'a variable name with a newline',
      { variables: [{ name: 'X\nY', value: 'x' }] },
      'variable 1 (name): ',
    ],
    [
      'a variable name with a leading dash',
      { variables: [{ name: '--bind', value: 'x' }] },
      'variable 1 (name): ',
    ],
    [
      'a reserved variable name',
      { variables: [{ name: 'PORT', value: '1' }] },
      'variable 1 PORT (name): ',
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
  ])('fails it with %s, saying which field, before fetching', async (_case, source, said) => {
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
  });

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
