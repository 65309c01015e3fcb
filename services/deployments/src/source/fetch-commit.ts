import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isBranchName, type LocalSourcePolicy, type LookupHost } from '@platform/shared';
import { fetchObjects } from './fetch-objects';
import { gitRunner, lastGitLine } from './git-runner';
import { checkRepository, displayUrl } from './repository-url';
import { SourceError } from './source-error';

export interface FetchCommitOptions {
  /** The service's `repository` (checked again here, at the moment of fetching). */
  repository: string;
  /** The service's `branch`: fetched along with the commit; a short hash is looked up on it. */
  branch: string;
  /** 7 to 64 hex characters (contracts.md); a full hash is 40 (SHA-1) or 64 (SHA-256). */
  commitHash: string;
  /** The workspace: a directory that does not exist yet (or is empty); removed if the fetch fails. */
  into: string;
  /** SOURCE_ALLOW_LOCAL: which `http:` and `file:` URLs and private hosts are allowed. */
  sources: LocalSourcePolicy;
  /** The whole fetch's time limit (SOURCE_FETCH_TIMEOUT); default 2 minutes. */
  timeoutMs?: number;
  /** Receives each line the deployment's log should show. */
  onLog?: (line: string) => void;
  /** Aborting it stops git at once (SIGKILL to its process group): a cancelled deployment. */
  signal?: AbortSignal;
  /** How host names are resolved for the address check; a seam for tests. */
  lookupHost?: LookupHost;
}

export interface FetchedCommit {
  /** The full hash that is checked out (a short hash resolved). */
  commitHash: string;
  /** Its message, as the deployment's `commitMessage` learns it (trailing newlines trimmed). */
  commitMessage: string;
}

const DEFAULT_TIMEOUT_MS = 120_000;

/**
 * Fetches exactly `commitHash` of `repository` into the fresh workspace `into` and checks it
 * out (detached HEAD), with the real git, isolated from this machine: no system or global
 * config, a throwaway HOME, no credential helper, no terminal prompt, only the allowed
 * protocols (`protocol.allow`), no redirects, the checked host addresses pinned.
 *
 * A full hash is fetched shallow (`--depth=1`) together with `branch`
 * (`refs/remotes/origin/<branch>`). Servers do not serve abbreviated hashes, so a short one
 * (7 to 39 characters) is resolved against the history of `branch`, fetched without blobs and
 * trees where the server supports filters (else whole): exactly one commit of the branch must
 * start with it. Fails with a `SourceError` whose message is also the last log line:
 * `commit <hash> is not in <repository>`, `branch <branch> is not in <repository>`,
 * `could not fetch <repository>: …`, `repository <repository> is refused: …`.
 */
export async function fetchCommit(options: FetchCommitOptions): Promise<FetchedCommit> {
  const log = options.onLog ?? (() => undefined);
  const shown = displayUrl(options.repository);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), timeoutMs);
  const stop = options.signal
    ? AbortSignal.any([options.signal, deadline.signal])
    : deadline.signal;
  const stopped = () =>
    options.signal?.aborted
      ? new SourceError('cancelled', `the fetch of ${shown} was cancelled`)
      : new SourceError('timeout', `the fetch of ${shown} took longer than ${timeoutMs} ms`);
  let home: string | undefined;
  let created = false;
  try {
    const commitHash = options.commitHash.toLowerCase();
    if (!/^[0-9a-f]{7,64}$/.test(commitHash)) {
      throw new SourceError('invalid', `${options.commitHash} is not a commit hash (7 to 64 hex)`);
    }
    // The API's rule (libs/shared), again: a branch reaches git's command line. JSON keeps a
    // NUL or a newline from reaching the log line that says so.
    if (!isBranchName(options.branch)) {
      throw new SourceError('invalid', `${JSON.stringify(options.branch)} is not a branch name`);
    }
    log(`==> fetching commit ${commitHash} (branch ${options.branch}) from ${shown}`);
    // A name lookup has no signal of its own: the time limit and a cancel stop the wait.
    const checked = await untilStopped(
      checkRepository(options.repository, {
        sources: options.sources,
        lookupHost: options.lookupHost,
      }),
      stop,
      stopped,
    );

    await prepareWorkspace(options.into);
    created = true;
    home = await mkdtemp(path.join(tmpdir(), 'platform-git-home-'));
    const git = gitRunner({
      cwd: options.into,
      home,
      sources: options.sources,
      pinned: checked.pinnedAddresses,
      signal: stop,
    });
    const gitOrStopped = async (args: string[]) => {
      const result = await git(args);
      if (stop.aborted) throw stopped();
      return result;
    };
    const mustGit = async (args: string[]) => {
      const result = await gitOrStopped(args);
      if (result.code !== 0) {
        throw new SourceError(
          'unreachable',
          `git ${args[0]} failed: ${lastGitLine(result.stderr)}`,
        );
      }
      return result;
    };

    await mustGit(['init', '--quiet']);
    await mustGit(['remote', 'add', '--end-of-options', 'origin', checked.url.href]);
    const fullHash = await fetchObjects(
      { gitOrStopped, mustGit },
      commitHash,
      options.branch,
      shown,
    );
    if (fullHash !== commitHash)
      log(`${commitHash} is commit ${fullHash} of branch ${options.branch}`);

    const checkout = await gitOrStopped([
      '-c',
      'advice.detachedHead=false',
      'checkout',
      '--quiet',
      '--detach',
      fullHash, // hexadecimal: checked above, or a line of rev-list
    ]);
    if (checkout.code !== 0) {
      throw new SourceError(
        'unreachable',
        `could not check out ${fullHash}: ${lastGitLine(checkout.stderr)}`,
      );
    }
    const head = await mustGit(['rev-parse', 'HEAD']);
    if (head.stdout.trim() !== fullHash) {
      throw new SourceError('unknown-commit', `commit ${commitHash} is not in ${shown}`);
    }
    const message = await mustGit(['log', '-1', '--format=%B', 'HEAD']);
    const commitMessage = message.stdout.replace(/\n+$/, '');
    log(`checked out ${fullHash}: ${commitMessage.split('\n')[0] ?? ''}`);
    return { commitHash: fullHash, commitMessage };
  } catch (err) {
    const error =
      err instanceof SourceError
        ? err
        : stop.aborted
          ? stopped()
          : new SourceError('unreachable', `could not fetch ${shown}: ${(err as Error).message}`);
    log(error.message);
    if (created) await rm(options.into, { recursive: true, force: true });
    throw error;
  } finally {
    clearTimeout(timer);
    if (home) await rm(home, { recursive: true, force: true });
  }
}

function untilStopped<T>(work: Promise<T>, signal: AbortSignal, stopped: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(stopped());
    if (signal.aborted) abort();
    signal.addEventListener('abort', abort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', abort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', abort);
        reject(err);
      },
    );
  });
}

async function prepareWorkspace(into: string): Promise<void> {
  await mkdir(into, { recursive: true });
  const entries = await readdir(into);
  if (entries.length > 0) {
    throw new SourceError('invalid', `the workspace ${into} is not empty`);
  }
}
