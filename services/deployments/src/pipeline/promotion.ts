import type { Deployment } from '../deployments/deployments.repository';
import { RuntimeError, type RuntimeClient } from '../runtime/local/client';

/**
 * A deployment's place in its service's order, as the runtime compares them (newest wins): its
 * `createdAt`, then its id, the order of `createdBefore` (deployments.repository.ts). Fixed-width
 * ISO time and hexadecimal id, so the strings compare as the deployments do.
 */
export const generationOf = (d: Pick<Deployment, 'id' | 'createdAt'>): string =>
  `${d.createdAt.toISOString()}_${d.id}`;

/**
 * Makes a ready release of `d` its service's live one, unless the runtime refuses it (a newer
 * deployment's release is live: newest wins; or the release is no longer ready): the release is
 * then stopped and the refusal says why. The check and the switch are one step in the runtime,
 * so of a deploy and a restore racing, the older never replaces the newer.
 */
export async function promoteNewestWins(
  runtime: RuntimeClient,
  releaseId: string,
  d: Pick<Deployment, 'id' | 'createdAt'>,
): Promise<{ promoted: true; previous: string | null } | { promoted: false; why: string }> {
  try {
    const { previous } = await runtime.promote(releaseId, generationOf(d));
    return { promoted: true, previous };
  } catch (err) {
    if (!(err instanceof RuntimeError) || err.status !== 409) throw err;
    await runtime.stopRelease(releaseId).catch(() => undefined);
    return { promoted: false, why: err.message };
  }
}
