import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  createAppRepository,
  FIXTURE_APP,
  useAppRepository,
  type AppAnswer,
  type AppBuildInfo,
} from './git-fixture';
import { freePort } from './helpers';
import { waitForOutput } from './processes';

const run = promisify(execFile);
const gitEnv = { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'git-fixture-test-'));
});
afterAll(() => rm(scratch, { recursive: true, force: true }));

let clones = 0;
/** A full clone of `url` checked out at `commit`: what a deployment's workspace would hold. */
async function checkout(url: string, commit: string): Promise<string> {
  clones += 1;
  const dir = path.join(scratch, `clone-${clones}`);
  await run('git', ['clone', '--quiet', url, dir], { env: gitEnv });
  await run('git', ['-C', dir, 'checkout', '--quiet', '--detach', commit], { env: gitEnv });
  return dir;
}

/** Runs a shell command line in `cwd` with `env`; resolves with its exit code and output. */
function sh(command: string, cwd: string, env: Record<string, string> = {}) {
  return new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn('sh', ['-c', command], {
      cwd,
      env: { PATH: process.env.PATH, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('close', (code) => resolve({ code, output }));
  });
}

const started: ChildProcess[] = [];
afterEach(() => {
  for (const child of started.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

/** Starts the built app in `cwd` and waits until it listens; resolves with its base URL. */
async function startApp(cwd: string, env: Record<string, string> = {}) {
  const port = await freePort();
  // exec: the app replaces the shell, so killing the child stops the app.
  const child = spawn('sh', ['-c', `exec ${FIXTURE_APP.startCommand}`], {
    cwd,
    env: { PATH: process.env.PATH, PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(child);
  await waitForOutput(child, `listening on ${port}`, { timeoutMs: 10_000, what: 'the app' });
  return { child, url: `http://127.0.0.1:${port}` };
}

describe('the git fixture', () => {
  const repository = useAppRepository();

  it('makes a bare repository at a file:// URL whose branch advances with each commit', async () => {
    const repo = repository();
    const first = await repo.commit({ greeting: 'one' });
    const second = await repo.commit({ greeting: 'two', message: 'the second' });

    expect(repo.url).toBe(`file://${repo.path}`);
    expect(repo.url).toMatch(/\/app\.git$/);
    expect(first.hash).toMatch(/^[0-9a-f]{40}$/);
    expect(second).toMatchObject({ message: 'the second', branch: 'main' });
    expect(second.revision).not.toBe(first.revision);
    expect(await repo.head()).toBe(second.hash);
    const { stdout } = await run(
      'git',
      ['--git-dir', repo.path, 'rev-list', '--format=%P %s', '--max-count=1', second.hash],
      { env: gitEnv },
    );
    expect(stdout).toContain(`${first.hash} the second`);
  });

  it('builds and serves the commit that was checked out, with its own identity', async () => {
    const repo = repository();
    const wanted = await repo.commit({ greeting: 'hello' });
    await repo.commit({ greeting: 'newer' });
    const dir = await checkout(repo.url, wanted.hash);

    const build = await sh(FIXTURE_APP.buildCommand, dir, { PLATFORM_COMMIT_HASH: wanted.hash });
    expect(build.code).toBe(0);
    expect(build.output).toContain(`built revision ${wanted.revision}`);
    const info = JSON.parse(
      await readFile(path.join(dir, 'build/info.json'), 'utf8'),
    ) as AppBuildInfo;
    expect(info).toMatchObject({
      revision: wanted.revision,
      greeting: 'hello',
      commitHash: wanted.hash,
    });

    const app = await startApp(dir);
    const root = await fetch(`${app.url}/`);
    expect(root.status).toBe(200);
    expect(await root.json()).toEqual({
      commit: wanted.revision,
      build: info.build,
      greeting: 'hello',
    });
    expect((await fetch(`${app.url}${FIXTURE_APP.healthCheckPath}`)).status).toBe(200);
  });

  it('answers the GREETING variable over the commit greeting, and each build has its own id', async () => {
    const repo = repository();
    const commit = await repo.commit({ greeting: 'from the commit' });
    const dir = await checkout(repo.url, commit.hash);
    await sh(FIXTURE_APP.buildCommand, dir);
    const firstBuild = JSON.parse(await readFile(path.join(dir, 'build/info.json'), 'utf8')).build;
    const rebuild = await sh(FIXTURE_APP.buildCommand, dir, { GREETING: 'from the build' });

    expect(rebuild.output).toContain('GREETING=from the build');
    const app = await startApp(dir, { GREETING: 'from a variable' });
    const body = (await (await fetch(`${app.url}/`)).json()) as AppAnswer;
    expect(body.greeting).toBe('from a variable');
    expect(body.build).not.toBe(firstBuild);
  });

  it('fails the build when asked to, leaving no build behind', async () => {
    const repo = repository();
    const commit = await repo.commit({ failBuild: true });
    const dir = await checkout(repo.url, commit.hash);

    const build = await sh(FIXTURE_APP.buildCommand, dir);

    expect(build.code).toBe(1);
    expect(build.output).toContain('build failed on purpose');
    expect(existsSync(path.join(dir, 'build/info.json'))).toBe(false);
    const start = await sh(FIXTURE_APP.startCommand, dir, { PORT: String(await freePort()) });
    expect(start).toEqual({
      code: 1,
      output: expect.stringContaining('build/info.json is missing'),
    });
  });

  it('makes an app that never becomes healthy when asked to', async () => {
    const repo = repository();
    const commit = await repo.commit({ neverHealthy: true });
    const dir = await checkout(repo.url, commit.hash);
    await sh(FIXTURE_APP.buildCommand, dir);

    const app = await startApp(dir);

    expect((await fetch(`${app.url}${FIXTURE_APP.healthCheckPath}`)).status).toBe(503);
    expect((await fetch(`${app.url}/`)).status).toBe(503);
  });

  it('makes an app that crashes after the given time', async () => {
    const repo = repository();
    const commit = await repo.commit({ crashAfterSeconds: 0.3 });
    const dir = await checkout(repo.url, commit.hash);
    await sh(FIXTURE_APP.buildCommand, dir);
    const app = await startApp(dir);
    const exited = new Promise<number | null>((resolve) => app.child.once('exit', resolve));

    expect((await fetch(`${app.url}/healthz`)).status).toBe(200);
    expect(await exited).toBe(1);
  });

  it('serves the repository over smart HTTP', async () => {
    const repo = repository();
    const commit = await repo.commit({ greeting: 'over http' });
    const served = await repo.serveHttp();

    const dir = await checkout(served.url, commit.hash);

    expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/app\.git$/);
    expect(JSON.parse(await readFile(path.join(dir, 'app.json'), 'utf8')).revision).toBe(
      commit.revision,
    );
    expect(served.requests()).toBeGreaterThan(0);
  });

  it('puts commits on another branch, starting from the repository branch', async () => {
    const repo = repository();
    const base = await repo.commit();
    const feature = await repo.commit({ branch: 'feature/x', files: { 'extra.txt': 'extra\n' } });

    expect(feature.branch).toBe('feature/x');
    expect(await repo.head('feature/x')).toBe(feature.hash);
    expect(await repo.head()).toBe(base.hash);
    expect(await repo.head('missing')).toBeNull();
    const dir = await checkout(repo.url, feature.hash);
    expect(await readFile(path.join(dir, 'extra.txt'), 'utf8')).toBe('extra\n');
  });
});

describe('a fixture repository with the app in a subdirectory', () => {
  it('puts the app under rootDirectory, and close() removes the repository', async () => {
    const repo = await createAppRepository({ rootDirectory: 'apps/web', branch: 'trunk' });
    try {
      const commit = await repo.commit({ greeting: 'nested' });
      const dir = await checkout(repo.url, commit.hash);

      expect(existsSync(path.join(dir, 'server.js'))).toBe(false);
      const build = await sh(FIXTURE_APP.buildCommand, path.join(dir, 'apps/web'));
      expect(build.code).toBe(0);
      expect(commit.branch).toBe('trunk');
    } finally {
      await repo.close();
    }
    expect(existsSync(repo.path)).toBe(false);
  });
});
