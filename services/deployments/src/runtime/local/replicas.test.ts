// A release of `replicas` copies (contracts.md, Services): each copy a sandbox of its own at an
// address of its own, ready only once every copy answered its health check, the router spreading
// requests over the healthy copies, a crashed copy restarted on its own while the others serve.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  startTestServer,
  testLogger,
  useRunning,
  waitFor,
  type TestServer,
} from '@platform/shared/testing';
import { Sandbox } from '../../sandbox/sandbox';
import { TEST_LIMITS, testSandboxOptions } from '../../sandbox/testing';
import type { Launcher } from './launcher';
import { createRouter } from '../router';
import { sandboxLauncher } from './sandbox-launcher';
import type { Supervisor } from './supervisor';
import {
  isRunning,
  routerGet,
  startTestRuntime,
  testRelease,
  testSupervisor,
  type Answer,
} from './testing';

/** The address of the copy that answered `GET /` (the test app says where it was reached). */
const addressOf = (answer: Answer) => {
  expect(answer.status).toBe(200);
  return (JSON.parse(answer.body) as { address: string }).address;
};

describe('a release of three copies (the supervisor process)', () => {
  // A crashed copy is started again 5 s later: long enough to ask the others meanwhile.
  const runtime = useRunning(() => startTestRuntime({ RUNTIME_RESTART_BACKOFF: '5s' }));

  it('runs three sandboxed copies at addresses of their own, and the URL reaches every one', async () => {
    const { client } = runtime();

    const live = await client.deploy(testRelease('svc-three', 'v1', { replicas: 3 }));

    expect(live).toMatchObject({ state: 'live', live: true });
    expect(live.copies.map((copy) => copy.state)).toEqual(['running', 'running', 'running']);
    const hosts = new Set(live.copies.map((copy) => copy.host));
    expect(hosts.size).toBe(3);
    expect(new Set(live.copies.map((copy) => copy.pid)).size).toBe(3);
    const seen = new Set<string>();
    for (let i = 0; i < 9; i++) seen.add(addressOf(await runtime().get('svc-three')));
    expect(seen).toEqual(hosts);
  });

  it('restarts a copy that crashed while the other two answer every request, then serves from all three again', async () => {
    const { client } = runtime();
    const live = await client.deploy(testRelease('svc-crash3', 'v1', { replicas: 3 }));

    await runtime()
      .get('svc-crash3', '/crash')
      .catch(() => undefined);
    const crashed = await waitFor(
      async () =>
        (await client.describe(live.releaseId)).copies.find((c) => c.state === 'restarting'),
      { what: 'a copy to be restarting' },
    );
    const answers: string[] = [];
    for (let i = 0; i < 8; i++) answers.push(addressOf(await runtime().get('svc-crash3')));
    const during = await client.describe(live.releaseId);

    expect(during.state).toBe('live');
    expect(during.copies[crashed.index]!.state).toBe('restarting');
    const others = live.copies.filter((c) => c.index !== crashed.index).map((c) => c.host);
    expect(new Set(answers)).toEqual(new Set(others));
    expect(isRunning(live.copies[crashed.index]!.pid!)).toBe(false);

    const after = await waitFor(
      async () => {
        const info = await client.describe(live.releaseId);
        return info.copies[crashed.index]!.state === 'running' ? info : null;
      },
      { timeoutMs: 30_000, what: 'the copy to run again' },
    );
    expect(after.copies[crashed.index]!.restarts).toBe(1);
    expect(after.restarts).toBe(1);
    // The others were never restarted.
    for (const copy of after.copies.filter((c) => c.index !== crashed.index)) {
      expect(copy).toMatchObject({ restarts: 0, pid: live.copies[copy.index]!.pid });
    }
    const seen = new Set<string>();
    for (let i = 0; i < 9; i++) seen.add(addressOf(await runtime().get('svc-crash3')));
    expect(seen).toEqual(new Set(after.copies.map((c) => c.host)));
  });

  it('stops every copy with the release', async () => {
    const { client } = runtime();
    const live = await client.deploy(testRelease('svc-stop3', 'v1', { replicas: 3 }));

    await client.stopService('svc-stop3');

    for (const copy of live.copies) expect(isRunning(copy.pid!)).toBe(false);
    expect(await runtime().get('svc-stop3')).toMatchObject({ status: 404 });
  });
});

/** The real sandbox launcher, the `nth` copy of each VERSION started with `env` added. */
function nthCopyWith(inner: Launcher, nth: number, env: Record<string, string>): Launcher {
  const started = new Map<string, number>();
  return {
    start(spec) {
      const version = spec.env.VERSION ?? '';
      const count = (started.get(version) ?? 0) + 1;
      started.set(version, count);
      return inner.start(count === nth ? { ...spec, env: { ...spec.env, ...env } } : spec);
    },
  };
}

describe('the health gate of a release of three copies (in this process)', () => {
  let sandbox: Sandbox;
  let runtimeDir: string;
  let supervisor: Supervisor | undefined;
  let router: TestServer | undefined;
  beforeAll(async () => {
    runtimeDir = mkdtempSync(path.join(tmpdir(), 'rt-replicas-'));
    sandbox = await Sandbox.create(testSandboxOptions({ killGraceMs: 2_000 }));
  });
  afterEach(async () => {
    await router?.close();
    await supervisor?.close();
  });
  afterAll(async () => {
    await sandbox.close();
    rmSync(runtimeDir, { recursive: true, force: true });
  });

  /** A supervisor whose third copy of each version is started with `env`, and its router. */
  async function supervisorWithThirdCopy(env: Record<string, string>) {
    const real = sandboxLauncher(sandbox, { limits: TEST_LIMITS, network: true });
    supervisor = testSupervisor({ launcher: nthCopyWith(real, 3, env), runtimeDir });
    const live = supervisor;
    router = await startTestServer(
      createRouter((serviceId) => live.liveRelease(serviceId), testLogger('router')),
    );
    return { supervisor: live, port: Number(new URL(router.url).port) };
  }

  it('is ready only once the last copy answered healthy', async () => {
    const { supervisor } = await supervisorWithThirdCopy({ HEALTHY_AFTER_MS: '4000' });
    const spec = testRelease('svc-gate', 'v1', { replicas: 3, healthTimeoutMs: 30_000 });

    const starting = supervisor.start(spec);
    const log = () => supervisor.readLog(spec.releaseId, 0, 1 << 20).then((read) => read.text);
    await waitFor(
      async () =>
        /copy 1 of 3: healthy/.test(await log()) && /copy 2 of 3: healthy/.test(await log()),
      { timeoutMs: 20_000, what: 'two copies healthy' },
    );
    const meanwhile = supervisor.describe(spec.releaseId);
    const started = await starting;

    expect(meanwhile.state).toBe('starting');
    expect(await log()).not.toMatch(/copy 3 of 3: healthy[^]*copy [12] of 3: healthy/);
    expect(started.state).toBe('ready');
    expect(await log()).toMatch(/copy 3 of 3: healthy[^]*==> healthy: GET \/healthz answered/);
  });

  it('fails a release with one copy that never answers healthy, stops every copy, and the previous release keeps serving', async () => {
    const { supervisor, port } = await supervisorWithThirdCopy({ UNHEALTHY: '1' });
    const previous = await supervisor.start(testRelease('svc-bad3', 'v1'));
    await supervisor.promote(previous.releaseId);
    const spec = testRelease('svc-bad3', 'v2', { replicas: 3, healthTimeoutMs: 2_000 });

    const attempt = await supervisor.start(spec);

    expect(attempt).toMatchObject({
      state: 'failed',
      live: false,
      failure: expect.stringMatching(
        /^copy 3 of 3: GET \/healthz did not answer 2xx or 3xx within 2000 ms \(last: status 500\)$/,
      ),
    });
    const { text } = await supervisor.readLog(spec.releaseId, 0, 1 << 20);
    const pids = [...text.matchAll(/copy \d of 3: started, pid (\d+)/g)].map((m) => Number(m[1]));
    expect(pids).toHaveLength(3);
    for (const pid of pids) expect(isRunning(pid)).toBe(false);
    expect(supervisor.liveRelease('svc-bad3')?.spec.releaseId).toBe(previous.releaseId);
    const answer = await routerGet(port, 'svc-bad3');
    expect(JSON.parse(answer.body)).toMatchObject({ version: 'v1' });
  });
});
