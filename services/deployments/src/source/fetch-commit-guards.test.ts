// What fetchCommit refuses even when the API was bypassed: a branch git could read as an option,
// and local repositories SOURCE_ALLOW_LOCAL does not open (symlinks resolved when fetching).
import { existsSync } from 'node:fs';
import { symlink } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { localSourcePolicy, platformCheckout, type LocalSources } from '@platform/shared';
import { useAppRepository } from '@platform/shared/testing';
import { gitEnv, run, useScratch } from '../test/fetch-logged';

const scratch = useScratch('fetch-guards-test-');
const { fetchLogged, freshDir } = scratch;
const fileUrl = (dir: string) => pathToFileURL(dir).href;

const ANYWHERE: LocalSources = { allow: 'anywhere' };

const repository = useAppRepository();

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
    const marker = scratch.fresh('marker');
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
      await symlink(scratch.path('not-yet'), link);

      const { result } = fetchLogged({ repository: fileUrl(link), commitHash: 'a'.repeat(40) });

      await expect(result).rejects.toMatchObject({
        reason: 'refused',
        message: expect.stringContaining('a symbolic link that leads nowhere'),
      });
    });
  });
});
