// A service with a Dockerfile (`dockerfilePath`) is built only on the Kubernetes runner
// (docs/kubernetes-runner.md): the local runtime answers its deployment FAILED, saying so, with
// nothing fetched or built.
import { useHarness } from '../test/harness';

const h = useHarness({ pipeline: {} });

describe('a Dockerfile on the local runtime', () => {
  it('is FAILED before fetching, the log saying the local runtime does not build Dockerfiles', async () => {
    const { service, id } = await h.newDeployment(
      {},
      { dockerfilePath: 'docker/Dockerfile', buildCommand: 'node build.js' },
    );

    const failed = await h.waitForStatus(service, id, 'FAILED', 30_000);

    expect(failed.logs).toContain(
      'The local runtime does not build Dockerfiles (dockerfilePath docker/Dockerfile)',
    );
    expect(failed.logs).not.toContain('==> fetching commit');
    expect(await h.builds.find({ ...service, deploymentId: id })).toBeNull();
  });
});
