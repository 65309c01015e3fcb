import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { localSourcePolicy } from '@platform/shared';
import { fetchCommit, type FetchCommitOptions } from '../source';

export const run = promisify(execFile);
/** git as the tests run it: none of this machine's configuration. */
export const gitEnv = {
  PATH: process.env.PATH,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
};

/**
 * A scratch directory of the test file's own (made before its tests, removed after), fresh paths
 * in it (a workspace that does not exist yet, an empty directory), and `fetchLogged`: fetchCommit
 * of branch main into a fresh workspace with every local source allowed, its log collected; it
 * resolves or rejects as fetchCommit does, with the log beside.
 */
type FetchOptions = Partial<FetchCommitOptions> &
  Pick<FetchCommitOptions, 'repository' | 'commitHash'>;

export function useScratch(prefix: string) {
  let dir = '';
  let made = 0;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), prefix));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));
  const fresh = (name: string) => path.join(dir, `${name}-${++made}`);
  const freshWorkspace = () => path.join(fresh('workspace'), 'source');
  return {
    path: (...parts: string[]) => path.join(dir, ...parts),
    /** A new name in the scratch directory, `<name>-<n>`. */
    fresh,
    freshWorkspace,
    async freshDir(name: string) {
      const made = fresh(name);
      await mkdir(made, { recursive: true });
      return made;
    },
    fetchLogged(options: FetchOptions) {
      const log: string[] = [];
      const into = options.into ?? freshWorkspace();
      const result = fetchCommit({
        branch: 'main',
        sources: localSourcePolicy({ SOURCE_ALLOW_LOCAL: { allow: 'anywhere' } }),
        into,
        onLog: (line) => log.push(line),
        ...options,
      });
      return { result, log, into };
    },
  };
}
