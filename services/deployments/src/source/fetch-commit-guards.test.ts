// What fetchCommit refuses even when the API was bypassed: a branch git could read as an option,
// and local repositories SOURCE_ALLOW_LOCAL does not open (symlinks resolved when fetching).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { localSourcePolicy, platformCheckout, type LocalSources } from '@platform/shared';
import { createAppRepository, useRunning } from '@platform/shared/testing';
import { fetchCommit, type FetchCommitOptions } from './index';

const run = promisify(execFile);
const gitEnv = { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };

let scratch: string;
let workspaces = 0;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'fetch-guards-test-'));
});
afterAll(() => rm(scratch, { recursive: true, force: true }));
const freshWorkspace = () => path.join(scratch, `workspace-${++workspaces}`, 'source');
/** A fresh directory of the test's own. */
const freshDir = async (name: string) => {
  const dir = path.join(scratch, `${name}-${++workspaces}`);
  await mkdir(dir, { recursive: true });
  return dir;
};
const fileUrl = (dir: string) => pathToFileURL(dir).href;

const ANYWHERE: LocalSources = { allow: 'anywhere' };

function fetchLogged(
  options: Partial<FetchCommitOptions> & Pick<FetchCommitOptions, 'repository' | 'commitHash'>,
) {
  const log: string[] = [];
  const into = options.into ?? freshWorkspace();
  const result = fetchCommit({
    branch: 'main',
    sources: localSourcePolicy({ SOURCE_ALLOW_LOCAL: ANYWHERE }),
    into,
    onLog: (line) => log.push(line),
    ...options,
  });
  return { result, log, into };
}

const repository = useRunning(() => createAppRepository());

describe('fetchCommit given a branch the API refuses', () => {
  it.each([
    ['a leading dash', '-x'],
    ['an option of git fetch', '--upload-pack=touch MARKER'],
    ['--end-of-options', '--end-of-options'],
    ['a NUL', 'main\u0000--upload-pack=touch MARKER'],
    ['a newline', 'main\n==> forged line'],
    ['a carriage return', 'main\r'],
  ])('refuses one with %s before running git, its log line on one line', async (_case, raw) => {
    const repo = repository();
    const commit = await repo.commit();
    const marker = path.join(scratch, `marker-${++workspaces}`);
    const branch = raw.replace('MARKER', marker);

    const { result, log, into } = fetchLogged({
      repository: repo.url,
      commitHash: commit.hash,
      branch,
    });

    await expect(result).rejects.toMatchObject({
      reason: 'invalid',
      message: `${JSON.stringify(branch)} is not a branch name`,
    });
    expect(log).toEqual([`${JSON.stringify(branch)} is not a branch name`]);
    expect(log.join('')).not.toMatch(/[\n\r\0]/);
    expect(existsSync(into)).toBe(false);
    expect(existsSync(marker)).toBe(false);
  });

  it('fetches a branch the API takes that is more than letters and digits (one rule)', async () => {
    const repo = repository();
    const commit = await repo.commit();
    await run('git', ['-C', repo.path, 'branch', 'release+1/é', commit.hash], { env: gitEnv });

    const { result } = fetchLogged({
      repository: repo.url,
      commitHash: commit.hash.slice(0, 10),
      branch: 'release+1/é',
    });

    await expect(result).resolves.toMatchObject({ commitHash: commit.hash });
  });
});

describe('fetchCommit and SOURCE_ALLOW_LOCAL', () => {
  /** A bare copy of the fixture repository at `dir`. */
  async function copyAt(dir: string) {
    const repo = repository();
    const commit = await repo.commit();
    await run('git', ['clone', '--quiet', '--bare', repo.url, dir], { env: gitEnv });
    return commit;
  }

  it('fetches a repository under the directory it names', async () => {
    const allowed = await freshDir('allowed');
    const commit = await copyAt(path.join(allowed, 'app.git'));

    const { result } = fetchLogged({
      repository: fileUrl(path.join(allowed, 'app.git')),
      commitHash: commit.hash,
      sources: localSourcePolicy({ SOURCE_ALLOW_LOCAL: { allow: 'under', directory: allowed } }),
    });

    await expect(result).resolves.toMatchObject({ commitHash: commit.hash });
  });

  it.each([
    ['a repository outside it', async (_allowed: string, outside: string) => outside],
    [
      'a symlink inside it that leads outside',
      async (allowed: string, outside: string) => {
        await symlink(outside, path.join(allowed, 'link.git'));
        return path.join(allowed, 'link.git');
      },
    ],
    [
      'a path that climbs out of it',
      async (allowed: string, outside: string) =>
        `${allowed}/../${path.relative(path.dirname(allowed), outside)}`,
    ],
  ])('refuses, with a directory, %s', async (_case, make) => {
    const allowed = await freshDir('allowed');
    const outside = path.join(await freshDir('outside'), 'app.git');
    const commit = await copyAt(outside);
    const target = await make(allowed, outside);

    const { result, into } = fetchLogged({
      repository: `file://${target}`,
      commitHash: commit.hash,
      sources: localSourcePolicy({ SOURCE_ALLOW_LOCAL: { allow: 'under', directory: allowed } }),
    });

    await expect(result).rejects.toMatchObject({
      reason: 'refused',
      message: expect.stringContaining(`local repositories must be under ${allowed}`),
    });
    expect(existsSync(into)).toBe(false);
  });

  it('refuses http:// with a directory: only its file:// repositories are local', async () => {
    const allowed = await freshDir('allowed');
    const { result } = fetchLogged({
      repository: 'http://127.0.0.1:9/app.git',
      commitHash: 'a'.repeat(40),
      sources: localSourcePolicy({ SOURCE_ALLOW_LOCAL: { allow: 'under', directory: allowed } }),
    });

    await expect(result).rejects.toMatchObject({
      reason: 'refused',
      message: expect.stringContaining('the scheme http: is not allowed (https:, file: only)'),
    });
  });

  describe('never the platform’s own files, even with true', () => {
    const refusedAsOwn = {
      reason: 'refused',
      message: expect.stringContaining("is refused: it is inside the platform's own files"),
    };

    it('refuses the checkout the platform runs from (its git history is there)', async () => {
      const { result, into } = fetchLogged({
        repository: fileUrl(platformCheckout()),
        commitHash: 'a'.repeat(40),
      });

      await expect(result).rejects.toMatchObject(refusedAsOwn);
      expect(existsSync(into)).toBe(false);
    });

    it('refuses a symlink elsewhere that leads into the checkout', async () => {
      const link = path.join(await freshDir('links'), 'platform.git');
      await symlink(platformCheckout(), link);

      const { result } = fetchLogged({ repository: fileUrl(link), commitHash: 'a'.repeat(40) });

      await expect(result).rejects.toMatchObject(refusedAsOwn);
    });

    it('refuses a repository in platform-dev of the cache (secrets, builds, runtime state)', async () => {
      const cache = await freshDir('cache');
      const commit = await copyAt(path.join(cache, 'platform-dev', 'builds', 'app.git'));
      const sources = localSourcePolicy({ SOURCE_ALLOW_LOCAL: ANYWHERE, XDG_CACHE_HOME: cache });

      const { result } = fetchLogged({
        repository: fileUrl(path.join(cache, 'platform-dev', 'builds', 'app.git')),
        commitHash: commit.hash,
        sources,
      });

      await expect(result).rejects.toMatchObject(refusedAsOwn);
    });

    it('refuses a repository in a tree the service adds (its builds), through a symlink', async () => {
      const builds = await freshDir('builds');
      const commit = await copyAt(path.join(builds, 'tenant', 'workspace'));
      const link = path.join(await freshDir('links'), 'app.git');
      await symlink(path.join(builds, 'tenant', 'workspace'), link);

      const { result } = fetchLogged({
        repository: fileUrl(link),
        commitHash: commit.hash,
        sources: localSourcePolicy({ SOURCE_ALLOW_LOCAL: ANYWHERE }, [builds]),
      });

      await expect(result).rejects.toMatchObject(refusedAsOwn);
    });

    it('refuses a symlink that leads nowhere yet', async () => {
      const link = path.join(await freshDir('links'), 'app.git');
      await symlink(path.join(scratch, 'not-yet'), link);

      const { result } = fetchLogged({ repository: fileUrl(link), commitHash: 'a'.repeat(40) });

      await expect(result).rejects.toMatchObject({
        reason: 'refused',
        message: expect.stringContaining('a symbolic link that leads nowhere'),
      });
    });
  });
});
