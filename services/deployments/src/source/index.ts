export { fetchCommit, type FetchCommitOptions, type FetchedCommit } from './fetch-commit';
export { checkRepository, displayUrl, type CheckedRepository } from './repository-url';
export { SourceError, type SourceFailure } from './source-error';
