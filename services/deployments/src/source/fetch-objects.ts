import { lastGitLine, type RunGit } from './git-runner';
import { SourceError } from './source-error';

const FULL_HASH = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/**
 * Fetches what the checkout of `commitHash` needs into the workspace's repository (the branch
 * along with it); resolves with the full hash, a short one resolved on the branch.
 */
export async function fetchObjects(
  { gitOrStopped, mustGit }: { gitOrStopped: RunGit; mustGit: RunGit },
  commitHash: string,
  branch: string,
  shown: string,
): Promise<string> {
  const fetch = async (options: string[], refs: string[]) => {
    const fetched = await gitOrStopped([
      'fetch',
      '--quiet',
      '--no-tags',
      '--no-recurse-submodules',
      ...options,
      '--end-of-options',
      'origin',
      ...refs,
    ]);
    if (fetched.code !== 0) throw fetchFailure(fetched.stderr, commitHash, branch, shown);
  };
  // The branch only ever inside a full ref name, after --end-of-options: never an option.
  const branchRef = `+refs/heads/${branch}:refs/remotes/origin/${branch}`;
  if (FULL_HASH.test(commitHash)) {
    await fetch(['--depth=1'], [commitHash, branchRef]);
    return commitHash;
  }
  await fetch(['--filter=tree:0'], [branchRef]);
  const history = await mustGit(['rev-list', '--end-of-options', `refs/remotes/origin/${branch}`]);
  const matches = history.stdout.split('\n').filter((hash) => hash.startsWith(commitHash));
  if (matches.length === 0) {
    throw new SourceError(
      'unknown-commit',
      `commit ${commitHash} is not in ${shown} (a short hash is looked up on branch ${branch})`,
    );
  }
  if (matches.length > 1) {
    throw new SourceError(
      'ambiguous-commit',
      `commit ${commitHash} is ambiguous in ${shown}: ${matches.length} commits of branch ${branch} start with it`,
    );
  }
  return matches[0]!;
}

/** What a failed `git fetch` said, as the deployment's log line. */
function fetchFailure(
  stderr: string,
  commitHash: string,
  branch: string,
  shown: string,
): SourceError {
  if (
    /not our ref|unadvertised object|no such remote ref|couldn't find remote ref [0-9a-f]{7,}/i.test(
      stderr,
    )
  ) {
    return new SourceError('unknown-commit', `commit ${commitHash} is not in ${shown}`);
  }
  if (/couldn't find remote ref/i.test(stderr)) {
    return new SourceError('unknown-branch', `branch ${branch} is not in ${shown}`);
  }
  if (/transport '.*' not allowed/.test(stderr)) {
    return new SourceError('refused', `repository ${shown} is refused: ${lastGitLine(stderr)}`);
  }
  return new SourceError('unreachable', `could not fetch ${shown}: ${lastGitLine(stderr)}`);
}
