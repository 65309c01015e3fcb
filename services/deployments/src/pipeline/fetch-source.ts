import type { LocalSourcePolicy } from '@platform/shared';
import { fetchCommit } from '../source/fetch-commit';
import { SourceError } from '../source/source-error';
import type { OpenedSource } from './deployment-source';
import type { StepContext } from './deployment-steps';

/**
 * A build's first move, whatever runs it: the deployment's exact commit fetched into `into`
 * (the URL checks of fetch-commit.ts apply), its progress in the log. Resolves with the line the
 * build fails with (the source refused or unreachable, the step stopped), or null when the
 * checkout is there.
 */
export async function fetchSource(
  context: StepContext,
  source: OpenedSource & { repository: string },
  into: string,
  options: { sources: LocalSourcePolicy; fetchTimeoutMs: number },
): Promise<string | null> {
  try {
    await fetchCommit({
      repository: source.repository,
      branch: source.branch,
      commitHash: context.deployment.commitHash,
      into,
      sources: options.sources,
      timeoutMs: options.fetchTimeoutMs,
      onLog: (line) => context.line(line),
      signal: context.signal,
    });
  } catch (err) {
    if (err instanceof SourceError) return err.message;
    throw err;
  }
  return context.signal.aborted ? 'The build step was stopped.' : null;
}
