import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import path from 'node:path';
import { localSourcePolicy, type LocalSources } from '@platform/shared';
import { freePort, useAppRepository, waitFor } from '@platform/shared/testing';
import { gitEnv, run, useScratch } from '../test/fetch-logged';
import { SourceError } from './index';

const git = async (cwd: string, ...args: string[]) =>
  (await run('git', ['-C', cwd, ...args], { env: gitEnv })).stdout.trim();

const scratch = useScratch('fetch-commit-test-');
const { fetchLogged, freshWorkspace } = scratch;
/** SOURCE_ALLOW_LOCAL as the service reads it, the platform's own trees refused. */
const sourcesOf = (setting: LocalSources) => localSourcePolicy({ SOURCE_ALLOW_LOCAL: setting });
const ANYWHERE = sourcesOf({ allow: 'anywhere' });
const NONE = sourcesOf({ allow: 'none' });
const revisionIn = async (dir: string) =>
  JSON.parse(await readFile(path.join(dir, 'app.json'), 'utf8')).revision as string;

describe('fetchCommit', () => {
  const repository = useAppRepository();

  it('checks out exactly the commit asked for, not the head of the branch, shallow, with the branch beside', async () => {
    const repo = repository();
    const wanted = await repo.commit({ message: 'the one we want\n\nwith a body' });
    const head = await repo.commit({ message: 'newer' });
    const { result, log, into } = await fetchLogged({
      repository: repo.url,
      commitHash: wanted.hash,
    });

    await expect(result).resolves.toEqual({
      commitHash: wanted.hash,
      commitMessage: 'the one we want\n\nwith a body',
    });
    expect(await git(into, 'rev-parse', 'HEAD')).toBe(wanted.hash);
    expect(await revisionIn(into)).toBe(wanted.revision);
    expect(await git(into, 'rev-parse', 'refs/remotes/origin/main')).toBe(head.hash);
    expect(await git(into, 'rev-parse', '--is-shallow-repository')).toBe('true');
    expect(await git(into, 'status', '--porcelain')).toBe('');
    expect(log).toEqual([
      `==> fetching commit ${wanted.hash} (branch main) from ${repo.url}`,
      `checked out ${wanted.hash}: the one we want`,
    ]);
  });

  it('fails with "commit <hash> is not in <repository>" for a commit the repository does not have, leaving no workspace', async () => {
    const repo = repository();
    await repo.commit();
    const unknown = 'a'.repeat(40);
    const { result, log, into } = await fetchLogged({ repository: repo.url, commitHash: unknown });

    await expect(result).rejects.toMatchObject({
      reason: 'unknown-commit',
      message: `commit ${unknown} is not in ${repo.url}`,
    });
    expect(log.at(-1)).toBe(`commit ${unknown} is not in ${repo.url}`);
    expect(existsSync(into)).toBe(false);
  });

  it('fails with "branch <branch> is not in <repository>" when the branch is missing', async () => {
    const repo = repository();
    const commit = await repo.commit();
    const { result } = await fetchLogged({
      repository: repo.url,
      commitHash: commit.hash,
      branch: 'release',
    });

    await expect(result).rejects.toMatchObject({
      reason: 'unknown-branch',
      message: `branch release is not in ${repo.url}`,
    });
  });

  it('resolves a short hash among the commits of the branch', async () => {
    const repo = repository();
    const wanted = await repo.commit({ message: 'short and sweet' });
    await repo.commit();
    const short = wanted.hash.slice(0, 7);
    const { result, log, into } = await fetchLogged({ repository: repo.url, commitHash: short });

    await expect(result).resolves.toEqual({
      commitHash: wanted.hash,
      commitMessage: 'short and sweet',
    });
    expect(await git(into, 'rev-parse', 'HEAD')).toBe(wanted.hash);
    expect(await revisionIn(into)).toBe(wanted.revision);
    expect(log).toContain(`${short} is commit ${wanted.hash} of branch main`);
  });

  it('refuses a short hash of a commit that is not on the branch, saying where it looked', async () => {
    const repo = repository();
    await repo.commit();
    const elsewhere = await repo.commit({ branch: 'feature' });
    const short = elsewhere.hash.slice(0, 10);
    const { result } = await fetchLogged({ repository: repo.url, commitHash: short });

    await expect(result).rejects.toMatchObject({
      reason: 'unknown-commit',
      message: `commit ${short} is not in ${repo.url} (a short hash is looked up on branch main)`,
    });
    // The full hash of the same commit is fetched whichever branch holds it.
    const full = await fetchLogged({ repository: repo.url, commitHash: elsewhere.hash });
    await expect(full.result).resolves.toMatchObject({ commitHash: elsewhere.hash });
  });

  it('refuses a file:// repository without SOURCE_ALLOW_LOCAL, before running git', async () => {
    const repo = repository();
    const commit = await repo.commit();
    const { result, into } = await fetchLogged({
      repository: repo.url,
      commitHash: commit.hash,
      sources: NONE,
    });

    await expect(result).rejects.toMatchObject({
      reason: 'refused',
      message: `repository ${repo.url} is refused: the scheme file: is not allowed (https: only)`,
    });
    expect(existsSync(into)).toBe(false);
  });

  it.each([
    [
      'credentials',
      'https://deployer:s3cr3t-token@example.com/app.git',
      'credentials in the URL are not allowed',
    ],
    ['a user name', 'https://git@example.com/app.git', 'credentials in the URL are not allowed'],
    ['ssh', 'ssh://git@example.com/app.git', 'the scheme ssh: is not allowed'],
    ['scp-like ssh', 'git@example.com:team/app.git', 'it is not a URL'],
    ['git://', 'git://example.com/app.git', 'the scheme git: is not allowed'],
    ['ext::', 'ext::sh -c touch% /tmp/pwned', 'the scheme ext: is not allowed'],
    ['fd::', 'fd::3', 'the scheme fd: is not allowed'],
    ['a local path', '/srv/git/app.git', 'it is not a URL'],
  ])(
    'refuses a repository URL with %s, even with SOURCE_ALLOW_LOCAL=true',
    async (_what, repository, why) => {
      const { result } = await fetchLogged({
        repository,
        commitHash: 'a'.repeat(40),
        sources: ANYWHERE,
      });

      const error = (await result.catch((err: unknown) => err)) as SourceError;
      expect(error).toBeInstanceOf(SourceError);
      expect(error.reason).toBe('refused');
      expect(error.message).toContain(why);
      expect(error.message).not.toContain('s3cr3t');
    },
  );

  it.each([
    ['a loopback literal', 'https://127.0.0.1/app.git', 'loopback address (127.0.0.1)'],
    ['an IPv6 loopback literal', 'https://[::1]/app.git', 'loopback address (::1)'],
    ['localhost', 'https://localhost/app.git', 'loopback address'],
    [
      'a name resolving to a private address',
      'https://git.internal.test/app.git',
      'private address (10.1.2.3)',
    ],
    [
      'a name with one private address among public ones',
      'https://mixed.test/app.git',
      'link-local address (169.254.169.254)',
    ],
  ])(
    'refuses %s without SOURCE_ALLOW_LOCAL, checked when fetching',
    async (_what, repository, why) => {
      const lookupHost = async (host: string) => {
        if (host === 'git.internal.test') return [{ address: '10.1.2.3' }];
        if (host === 'mixed.test')
          return [{ address: '93.184.215.14' }, { address: '169.254.169.254' }];
        return [{ address: '127.0.0.1' }];
      };
      const { result } = await fetchLogged({
        repository,
        commitHash: 'a'.repeat(40),
        sources: NONE,
        lookupHost,
      });

      await expect(result).rejects.toMatchObject({
        reason: 'refused',
        message: expect.stringContaining(why),
      });
    },
  );

  it('says it could not fetch a repository that does not exist', async () => {
    const missing = `file://${scratch.path('nothing-here.git')}`;
    const { result, log } = await fetchLogged({ repository: missing, commitHash: 'b'.repeat(40) });

    await expect(result).rejects.toMatchObject({
      reason: 'unreachable',
      message: expect.stringMatching(
        new RegExp(`^could not fetch ${missing}: .*does not appear to be a git repository`),
      ),
    });
    expect(log.at(-1)).toMatch(/^could not fetch /);
  });

  it('says it could not fetch a host that refuses the connection', async () => {
    const port = await freePort();
    const repository = `http://127.0.0.1:${port}/app.git`;
    const { result } = await fetchLogged({ repository, commitHash: 'b'.repeat(40) });

    await expect(result).rejects.toMatchObject({
      reason: 'unreachable',
      message: expect.stringMatching(new RegExp(`^could not fetch ${repository}: `)),
    });
  });

  describe('over HTTP', () => {
    /** A server answering every request with `status` and `headers`; closed after the test. */
    async function answering(status: number, headers: Record<string, string>) {
      const server = createHttpServer((_req, res) => res.writeHead(status, headers).end());
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      closers.push(
        () =>
          new Promise<void>((resolve) => {
            server.closeAllConnections();
            server.close(() => resolve());
          }),
      );
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}/app.git`;
    }
    const closers: (() => Promise<void>)[] = [];
    afterEach(async () => {
      await Promise.all(closers.splice(0).map((close) => close()));
    });

    it('fetches exactly the commit from an http:// repository with SOURCE_ALLOW_LOCAL=true', async () => {
      const repo = repository();
      const wanted = await repo.commit();
      await repo.commit();
      const served = await repo.serveHttp();
      const { result, into } = fetchLogged({ repository: served.url, commitHash: wanted.hash });

      await expect(result).resolves.toMatchObject({ commitHash: wanted.hash });
      expect(await revisionIn(into)).toBe(wanted.revision);
      expect(await git(into, 'rev-parse', '--is-shallow-repository')).toBe('true');
    });

    it('connects to the addresses it checked, never resolving the name again', async () => {
      const repo = repository();
      const wanted = await repo.commit();
      const served = new URL((await repo.serveHttp()).url);
      // Only the fetch's own lookup knows this name: git reaches it through the pinned address.
      const byName = `http://git.fixture.invalid:${served.port}${served.pathname}`;
      const looked: string[] = [];
      const { result } = fetchLogged({
        repository: byName,
        commitHash: wanted.hash,
        lookupHost: async (host) => {
          looked.push(host);
          return [{ address: '127.0.0.1' }];
        },
      });

      await expect(result).resolves.toMatchObject({ commitHash: wanted.hash });
      expect(looked).toEqual(['git.fixture.invalid']);
    });

    it('does not follow a redirect', async () => {
      const repo = repository();
      const commit = await repo.commit();
      const served = await repo.serveHttp();
      const redirecting = await answering(301, { location: served.url + '/info/refs' });
      const { result } = fetchLogged({ repository: redirecting, commitHash: commit.hash });

      await expect(result).rejects.toMatchObject({
        reason: 'unreachable',
        message: expect.stringMatching(new RegExp(`^could not fetch ${redirecting}: `)),
      });
      expect(served.requests()).toBe(0);
    });

    it('fails at once, asking nobody, when the server wants credentials', async () => {
      const guarded = await answering(401, { 'www-authenticate': 'Basic realm="git"' });
      const { result } = fetchLogged({
        repository: guarded,
        commitHash: 'd'.repeat(40),
        timeoutMs: 10_000,
      });

      await expect(result).rejects.toMatchObject({
        reason: 'unreachable',
        message: expect.stringMatching(/^could not fetch .*terminal prompts disabled/),
      });
    });
  });

  describe('against a server that accepts connections and never answers', () => {
    let server: Server;
    let url: string;
    const connections: Socket[] = [];
    beforeAll(async () => {
      server = createServer((socket) => {
        connections.push(socket);
        socket.resume(); // reads on, so the end of git's connection is seen
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const address = server.address();
      url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/app.git`;
    });
    afterAll(async () => {
      for (const socket of connections) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    });

    it('stops git and fails as cancelled when the signal aborts', async () => {
      const before = connections.length;
      const controller = new AbortController();
      const { result, into } = await fetchLogged({
        repository: url,
        commitHash: 'c'.repeat(40),
        signal: controller.signal,
      });
      await waitFor(() => connections.length > before, { what: 'git to connect' });

      controller.abort();

      await expect(result).rejects.toMatchObject({
        reason: 'cancelled',
        message: `the fetch of ${url} was cancelled`,
      });
      expect(existsSync(into)).toBe(false);
      await waitFor(() => connections.slice(before).every((socket) => socket.closed), {
        what: "git's connection to close",
      });
    });

    it('counts a host name lookup that never answers in the time limit', async () => {
      const { result, into } = fetchLogged({
        repository: 'https://slow-dns.test/app.git',
        commitHash: 'c'.repeat(40),
        sources: NONE,
        timeoutMs: 300,
        lookupHost: () => new Promise(() => undefined),
      });

      await expect(result).rejects.toMatchObject({ reason: 'timeout' });
      expect(existsSync(into)).toBe(false);
    });

    it('fails as timed out after timeoutMs', async () => {
      const { result } = await fetchLogged({
        repository: url,
        commitHash: 'c'.repeat(40),
        timeoutMs: 500,
      });

      await expect(result).rejects.toMatchObject({
        reason: 'timeout',
        message: `the fetch of ${url} took longer than 500 ms`,
      });
    });
  });

  it('refuses a workspace that is not empty, and input the API should have refused', async () => {
    const repo = repository();
    const commit = await repo.commit();
    const into = freshWorkspace();
    await mkdir(into, { recursive: true });
    await writeFile(path.join(into, 'leftover'), 'x');

    await expect(
      (await fetchLogged({ repository: repo.url, commitHash: commit.hash, into })).result,
    ).rejects.toMatchObject({
      reason: 'invalid',
      message: `the workspace ${into} is not empty`,
    });
    await expect(
      (await fetchLogged({ repository: repo.url, commitHash: 'xyz1234' })).result,
    ).rejects.toMatchObject({
      reason: 'invalid',
    });
    await expect(
      (
        await fetchLogged({
          repository: repo.url,
          commitHash: commit.hash,
          branch: '--upload-pack=touch',
        })
      ).result,
    ).rejects.toMatchObject({ reason: 'invalid' });
  });
});
