import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type { AppAnswer } from '@platform/shared/testing';
import { TEST_INTERNAL_SECRET, waitFor } from '@platform/shared/testing';
import type { DeploymentStatus } from '../deployments/status';
import { useHarness, type Harness } from '../test/harness';
import type { OwnedService } from '../test/projects-stub';
import { stopSupervisor } from '../runtime/local/testing';
import { MASK } from './secret-mask';
import { deployCommit, probe, servedCommit } from '../test/served-app';

// The real pipeline: git fetches from the fixture repository, builds run in the sandbox, apps in
// the local runtime (a supervisor of this file's), answering through its router.
const h = useHarness({ pipeline: {} });

const SLOW = 30_000;
/** npm install from the public registry: seconds, more on a loaded machine. */
const NPM_INSTALL = 250_000;

const deploy = (
  harness: Harness,
  service: OwnedService,
  commitHash: string,
  status: DeploymentStatus,
) => deployCommit(harness, service, commitHash, status, SLOW);

describe('deploying a commit', () => {
  it('fetches, builds and starts the commit: its URL answers with that commit’s content', async () => {
    const { service, id } = await h.newDeployment({ commitMessage: 'The first version' });

    const deployed = await h.waitForStatus(service, id, 'DEPLOYED', SLOW);

    const answer = await h.app(service);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({
      commit: h.firstCommit.revision,
      greeting: 'hello',
    });
    const { logs } = deployed;
    expect(logs).toContain(`==> fetching commit ${h.firstCommit.hash} (branch main)`);
    expect(logs).toContain(`built revision ${h.firstCommit.revision}`);
    expect(logs).toContain('==> healthy: GET /healthz answered');
    expect(logs).toContain("==> the service's URL now serves this deployment");
    expect(await h.changes(id)).toEqual(['->BUILDING', 'BUILDING>DEPLOYING', 'DEPLOYING>DEPLOYED']);
    // The build is kept for a rollback.
    expect(await h.builds.find({ ...service, deploymentId: id })).toMatchObject({
      commitHash: h.firstCommit.hash,
    });
  });

  it('replaces the live version with the next commit at the same URL, never failing a request', async () => {
    const { service, id } = await h.newDeployment();
    await h.waitForStatus(service, id, 'DEPLOYED', SLOW);
    const next = await h.appRepository.commit({ greeting: 'second' });
    const probing = probe(h, service);

    const second = await deploy(h, service, next.hash, 'DEPLOYED');

    const answers = await probing.stop();
    expect(await servedCommit(h, service)).toBe(next.revision);
    // Only the first version, then only the second: no error, no gap.
    const changes = answers.filter((a, i) => i === 0 || a !== answers[i - 1]);
    expect(changes).toEqual([h.firstCommit.revision, next.revision]);
    expect(second.logs).toMatch(/the previous one \(\S+\) is stopped/);
  });

  it.each([
    ['an unknown commit', async () => 'f'.repeat(40), /commit f{40} is not in /, false],
    [
      'a failing build',
      async () => (await h.appRepository.commit({ failBuild: true })).hash,
      /The build command failed with exit code 1\./,
      false,
    ],
    [
      'an app that never becomes healthy',
      async () => (await h.appRepository.commit({ neverHealthy: true })).hash,
      /health/i,
      true,
    ],
  ])(
    'fails %s while the previous version keeps answering',
    async (_what, commitOf, logLine, kept) => {
      const { service, id } = await h.newDeployment({}, { healthCheckPath: '/healthz' });
      await h.waitForStatus(service, id, 'DEPLOYED', SLOW);
      const commitHash = await commitOf();
      const probing = probe(h, service);

      const failed = await deploy(h, service, commitHash, 'FAILED');

      const answers = await probing.stop();
      expect(failed.logs).toMatch(logLine);
      // A failed build leaves nothing behind; a good build whose app failed is kept.
      const dir = path.join(h.config.BUILDS_DIR, service.projectId, service.serviceId, failed.id);
      expect(existsSync(dir)).toBe(kept);
      expect(answers.length).toBeGreaterThan(0);
      expect(new Set(answers)).toEqual(new Set([h.firstCommit.revision]));
    },
  );

  it('fails at once a service without a repository, saying so', async () => {
    const { service, id } = await h.newDeployment({}, { repository: null });

    const failed = await h.waitForStatus(service, id, 'FAILED', SLOW);

    expect(failed.logs).toContain('the service has no repository');
  });
});

describe('variables', () => {
  it('reach the build and the app; a secret is **** in the log and in no answer', async () => {
    const secret = `s3cret-${Date.now()}-value`;
    const commit = await h.appRepository.commit({ printVariables: ['GREETING', 'API_TOKEN'] });
    const { service, id } = await h.newDeployment(
      { commitHash: commit.hash },
      {
        variables: [
          { name: 'GREETING', value: 'hi from a variable' },
          { name: 'API_TOKEN', value: secret, secret: true },
        ],
      },
    );

    const deployed = await h.waitForStatus(service, id, 'DEPLOYED', SLOW);

    expect(JSON.parse((await h.app(service)).body)).toMatchObject({
      greeting: 'hi from a variable',
    });
    // The build printed both (build.js) and so did the app (server.js).
    expect(deployed.logs.match(/GREETING=hi from a variable/g)).toHaveLength(2);
    expect(
      deployed.logs.match(new RegExp(`API_TOKEN=${MASK.replace(/\*/g, '\\*')}`, 'g')),
    ).toHaveLength(2);
    expect(deployed.logs).not.toContain(secret);
    // Nor in the runtime's own log of the release, on disk.
    const logDir = path.join(h.config.RUNTIME_DIR, 'logs');
    const releaseLogs = readdirSync(logDir).filter((name) => name.startsWith(`${id}-`));
    expect(releaseLogs).not.toEqual([]);
    for (const name of releaseLogs) {
      const text = readFileSync(path.join(logDir, name), 'utf8');
      expect(text).toContain(`API_TOKEN=${MASK}`);
      expect(text).not.toContain(secret);
    }
    expect(JSON.stringify((await h.api.list(service)).body)).not.toContain(secret);
    // At rest only sealed.
    const stored = await h.models.sources.findById(id).lean();
    expect(JSON.stringify(stored)).not.toContain(secret);
  });

  it('stay as they were at the trigger', async () => {
    const commit = await h.appRepository.commit({ printVariables: ['GREETING'] });
    const { service, id } = await h.newDeployment(
      { commitHash: commit.hash },
      { variables: [{ name: 'GREETING', value: 'as triggered' }], replicas: 2 },
    );
    h.projects.updateSource(service, {
      variables: [{ name: 'GREETING', value: 'changed later' }],
      replicas: 5,
    });

    await h.waitForStatus(service, id, 'DEPLOYED', SLOW);

    expect(JSON.parse((await h.app(service)).body)).toMatchObject({ greeting: 'as triggered' });
    expect(await h.models.sources.findById(id).lean()).toMatchObject({ replicas: 2 });
  });
});

describe('the sandbox of a build', () => {
  it('shows the build nothing of the platform', async () => {
    const { service, id } = await h.newDeployment(
      {},
      {
        buildCommand:
          'cat /proc/1/environ; for f in /proc/*/environ; do cat "$f"; done; env; ls /root; node build.js',
      },
    );

    const deployed = await h.waitForStatus(service, id, 'DEPLOYED', SLOW);

    expect(deployed.logs).toContain('PLATFORM_DEPLOYMENT_ID=');
    expect(deployed.logs).not.toContain(TEST_INTERNAL_SECRET);
    expect(deployed.logs).not.toContain('MONGO_URL');
    expect(deployed.logs).not.toContain(h.config.ENCRYPTION_KEY);
  });

  // npm install takes seconds, more on a loaded machine and when the registry is slow (npm then
  // retries): far more than the harness's 20 s.
  describe('with time for npm install (STEP_TIMEOUT 4 min)', () => {
    const installing = useHarness({ pipeline: { STEP_TIMEOUT: '240s' } });

    it(
      'installs a package and its dependencies from the public registry, and cannot reach the platform',
      async () => {
        const platform = `node -e "fetch('${installing.projects.url}/').then(() => console.log('reached the platform'), (e) => console.log('platform unreachable:', e.cause?.code))"`;
        const install =
          'npm init -y >/dev/null && npm install --no-audit --no-fund --loglevel=http express@4.21.2 && ' +
          "node -e \"require('express'); console.log('express loaded')\"";
        const { service, id } = await installing.newDeployment(
          {},
          { buildCommand: `${platform} && ${install} && node build.js` },
        );

        const deployed = await installing.waitForStatus(service, id, 'DEPLOYED', NPM_INSTALL);

        expect(deployed.logs).toContain('platform unreachable: ECONNREFUSED');
        expect(deployed.logs).not.toContain('\nreached the platform');
        expect(deployed.logs).toContain('express loaded');
      },
      NPM_INSTALL + 10_000,
    );
  });

  describe('with a memory limit of 256 MiB', () => {
    const small = useHarness({ pipeline: { BUILD_MEMORY_BYTES: String(256 * 1024 ** 2) } });

    it('fails a build that allocates past it, and its log names the limit', async () => {
      const allocate =
        'node -e "const kept = []; for (let i = 0; i < 64; i++) kept.push(Buffer.alloc(64 * 1024 * 1024, 1)); console.log(\'allocated 4 GiB\')"';
      const { service, id } = await small.newDeployment({}, { buildCommand: allocate });

      const failed = await small.waitForStatus(service, id, 'FAILED', SLOW);

      // (The command line itself, which the log shows, holds the words.)
      expect(failed.logs).not.toContain('\nallocated 4 GiB\n');
      expect(failed.logs).toContain(
        'The build command went past its memory limit (256 MiB, BUILD_MEMORY_BYTES) and was stopped.',
      );
    });
  });

  describe('with a time limit of 2 s and 40 processes', () => {
    const short = useHarness({
      pipeline: {
        STEP_TIMEOUT: '2s',
        BUILD_PROCESSES: '40',
      },
    });

    it('stops a build that forks without bound, and fails it', async () => {
      const { service, id } = await short.newDeployment(
        {},
        { buildCommand: 'bomb() { bomb | bomb & }; bomb; exec sleep 60' },
      );

      const failed = await short.waitForStatus(service, id, 'FAILED', SLOW);

      expect(failed.logs).toContain('Cannot fork');
      // The shell ends when a fork fails, or the time limit stops what is left: each says so.
      expect(failed.logs).toMatch(
        /The build command (ran longer than 2\.0 s and was stopped|failed with exit code \d+: it reached its process limit \(40, BUILD_PROCESSES\))\.\n$/,
      );
    });

    it('fails a build past its time limit', async () => {
      const { service, id } = await short.newDeployment(
        {},
        { buildCommand: 'echo started; sleep 600' },
      );

      const failed = await short.waitForStatus(service, id, 'FAILED', SLOW);

      expect(failed.logs).toContain('started');
      expect(failed.logs).toContain('The build command ran longer than 2.0 s and was stopped.');
    });
  });
});

describe('newest wins', () => {
  it('cancels an older deployment still BUILDING, saying which one superseded it', async () => {
    const { service, id: older } = await h.newDeployment({}, { buildCommand: 'sleep 600' });
    await h.waitForLogs(service, older, '==> running the build command');
    h.projects.updateSource(service, { buildCommand: 'node build.js' });

    const newer = await deploy(h, service, h.firstCommit.hash, 'DEPLOYED');

    const cancelled = await h.waitForLogs(service, older, `superseded by ${newer.id}`);
    expect(cancelled.status).toBe('CANCELLED');
    expect(await h.changes(older)).toEqual(['->BUILDING', 'BUILDING>CANCELLED']);
  });

  it('lets a deployment already DEPLOYING finish before the newest starts', async () => {
    const slowStart = await h.appRepository.commit({ listenAfterSeconds: 1.5 });
    const { service, id: first } = await h.newDeployment({ commitHash: slowStart.hash });
    await h.waitForStatus(service, first, 'DEPLOYING', SLOW);

    const res = await h.api.trigger(service, { commitHash: h.firstCommit.hash });
    const second = res.body.id as string;

    await h.waitForStatus(service, first, 'DEPLOYED', SLOW);
    await h.waitForStatus(service, second, 'DEPLOYED', SLOW);
    const [a, b] = [await h.document(first), await h.document(second)];
    // The newest was claimed only once the first had finished.
    expect(b!.claimedAt!.getTime()).toBeGreaterThanOrEqual(a!.deployedAt!.getTime());
    expect(await servedCommit(h, service)).toBe(h.firstCommit.revision);
  });
});

describe('redeploy and rollback', () => {
  it('rollback serves an earlier build again without building; redeploy builds again', async () => {
    const { service, id: first } = await h.newDeployment();
    await h.waitForStatus(service, first, 'DEPLOYED', SLOW);
    const firstBuild = (JSON.parse((await h.app(service)).body) as AppAnswer).build;
    const next = await h.appRepository.commit({ greeting: 'next' });
    await deploy(h, service, next.hash, 'DEPLOYED');

    const rollback = await h.api.rollback(service, first);
    expect(rollback.status).toBe(201);
    expect(rollback.body).toMatchObject({ status: 'BUILDING', commitHash: h.firstCommit.hash });
    const rolledBack = await h.waitForStatus(service, rollback.body.id, 'DEPLOYED', SLOW);

    expect(rolledBack.logs).toContain(`==> reusing the build of deployment ${first}`);
    expect(rolledBack.logs).not.toContain('==> fetching');
    expect(JSON.parse((await h.app(service)).body)).toMatchObject({
      commit: h.firstCommit.revision,
      build: firstBuild,
    });

    const redeploy = await h.api.redeploy(service, first);
    expect(redeploy.status).toBe(201);
    const rebuilt = await h.waitForStatus(service, redeploy.body.id, 'DEPLOYED', SLOW);
    expect(rebuilt.logs).toContain('==> fetching');
    const answer = JSON.parse((await h.app(service)).body) as AppAnswer;
    expect(answer.commit).toBe(h.firstCommit.revision);
    expect(answer.build).not.toBe(firstBuild);
  });

  it('refuses with 409 to roll back to a deployment that never reached DEPLOYED, or whose build is gone', async () => {
    const { service, id } = await h.newDeployment({}, { buildCommand: 'exit 3' });
    await h.waitForStatus(service, id, 'FAILED', SLOW);
    h.projects.updateSource(service, { buildCommand: 'node build.js' });
    const deployed = await deploy(h, service, h.firstCommit.hash, 'DEPLOYED');
    await h.builds.discard({ ...service, deploymentId: deployed.id });

    const never = await h.api.rollback(service, id);
    const gone = await h.api.rollback(service, deployed.id);

    expect([never.status, gone.status]).toEqual([409, 409]);
    expect(never.body.message).toBe(
      'Only a deployment that reached DEPLOYED can be rolled back to.',
    );
    expect(gone.body.message).toContain('is no longer kept');
  });

  it('answers 404 for another account’s deployment', async () => {
    const { service, id } = await h.newDeployment();
    const stranger = h.projects.addService();

    const res = await h.api.rollback({ ...service, accountId: stranger.accountId }, id);

    expect(res.status).toBe(404);
  });
});

describe('a deleted service', () => {
  it('loses its app and its builds', async () => {
    const { service, id } = await h.newDeployment();
    await h.waitForStatus(service, id, 'DEPLOYED', SLOW);

    await h.service.removeServiceDeployments(
      service.accountId,
      service.projectId,
      service.serviceId,
    );

    expect((await h.app(service)).status).toBe(404);
    const serviceDir = path.join(h.config.BUILDS_DIR, service.projectId, service.serviceId);
    await waitFor(async () => (await readdir(serviceDir).catch(() => [])).length === 0, {
      what: 'the service’s builds to go',
    });
  });
});

describe('a deployed app', () => {
  it('goes on writing into its deployment’s log: what it prints, a crash and the restart', async () => {
    const crashing = await h.appRepository.commit({
      crashAfterSeconds: 1,
      printVariables: ['API_TOKEN'],
    });
    const secret = `token-${Date.now()}`;
    const { service, id } = await h.newDeployment(
      { commitHash: crashing.hash },
      { variables: [{ name: 'API_TOKEN', value: secret, secret: true }] },
    );
    await h.waitForStatus(service, id, 'DEPLOYED', SLOW);

    const after = await h.waitForLogs(service, id, 'restarting in');

    expect(after.logs).toContain('crashing on purpose');
    // Printed again by the restarted app, after the deployment was DEPLOYED: masked too.
    expect(after.logs.indexOf('==> deploy step finished')).toBeLessThan(
      after.logs.indexOf('crashing on purpose'),
    );
    expect(after.logs).not.toContain(secret);
    const restarted = await h.waitForDeployment(
      service,
      id,
      'the restarted app printing again',
      (d) => d.logs.split(`API_TOKEN=${MASK}`).length > 3,
    );
    expect(restarted.status).toBe('DEPLOYED');
  });
});

describe('when the runtime itself stopped (killed, or the machine restarted)', () => {
  const own = useHarness({ pipeline: {} });

  it('starts it again, and each service’s live deployment from its kept build, its log saying so', async () => {
    const { service, id } = await own.newDeployment();
    await own.waitForStatus(service, id, 'DEPLOYED', SLOW);
    const before = JSON.parse((await own.app(service)).body) as AppAnswer;

    await stopSupervisor(own.runtime!);
    await expect(own.app(service)).rejects.toThrow(/ECONNREFUSED/);

    const answer = await waitFor(
      async () => {
        const res = await own.app(service).catch(() => null);
        return res?.status === 200 ? res : null;
      },
      { timeoutMs: 20_000, what: 'the app to answer again' },
    );
    expect(JSON.parse(answer.body)).toEqual(before);
    const logs = await own.waitForDeployment(
      service,
      id,
      'the restored app’s start in its log',
      (d) => d.logs.split('==> healthy').length === 3,
    );
    expect(logs.logs).toContain(
      '==> the runtime had stopped: this deployment was started again from its build',
    );
  });
});
