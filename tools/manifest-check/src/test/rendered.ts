import path from 'node:path';
import { CHECKER_BUILD_TIMEOUT_MS, REPO_ROOT, loadCompose, renderKustomization } from '../checker';
import type { ComposeResult, KustomizeResult } from '../checker';
import { readEnvFile } from '../kubernetes';

export const OVERLAYS = ['development', 'production'] as const;
export type Overlay = (typeof OVERLAYS)[number];

const renders = new Map<string, Promise<KustomizeResult>>();

/** The rendering of an overlay (or k8s/base), once per test file. */
export function rendered(overlay: Overlay | 'base'): Promise<KustomizeResult> {
  const dir = overlay === 'base' ? 'k8s/base' : `k8s/overlays/${overlay}`;
  if (!renders.has(dir)) renders.set(dir, renderKustomization(dir));
  return renders.get(dir)!;
}

/**
 * In a describe block: the rendering of an overlay, filled in before its tests run (so
 * `result.objects` reads as it does after an `await rendered(overlay)`).
 */
export function useRendered(overlay: Overlay | 'base'): KustomizeResult {
  const result = {} as KustomizeResult;
  beforeAll(async () => {
    Object.assign(result, await rendered(overlay));
  }, CHECKER_BUILD_TIMEOUT_MS);
  return result;
}

let compose: Promise<ComposeResult> | undefined;

/** docker-compose.yml as `docker compose` loads it with an empty environment. */
export function composeProject(): Promise<ComposeResult> {
  compose ??= loadCompose('docker-compose.yml');
  return compose;
}

/**
 * The Secrets an overlay references but does not render, with stand-in values: production's
 * platform-secrets is created outside git from the keys in platform-secrets.example.env.
 */
export function externalSecrets(overlay: Overlay): Record<string, Record<string, string>> {
  if (overlay !== 'production') return {};
  return {
    'platform-secrets': readEnvFile(
      path.join(REPO_ROOT, 'k8s/overlays/production/platform-secrets.example.env'),
    ),
  };
}
