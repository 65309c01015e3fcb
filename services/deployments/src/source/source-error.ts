/** Why a fetch failed; the pipeline logs the message and ends the deployment FAILED (or CANCELLED). */
export type SourceFailure =
  /** The URL, its scheme or its host is not allowed. */
  | 'refused'
  /** The repository could not be reached or read (no such repository, network, authentication). */
  | 'unreachable'
  /** The commit (or a short hash's match) is not in the repository. */
  | 'unknown-commit'
  /** The branch is not in the repository. */
  | 'unknown-branch'
  /** A short hash matches more than one commit of the branch. */
  | 'ambiguous-commit'
  | 'timeout'
  | 'cancelled'
  /** Bad input from the caller (a hash or branch the API should have refused). */
  | 'invalid';

/** A fetch that failed; `message` is the log line that says why (it never holds credentials). */
export class SourceError extends Error {
  constructor(
    readonly reason: SourceFailure,
    message: string,
  ) {
    super(message);
    this.name = 'SourceError';
  }
}
