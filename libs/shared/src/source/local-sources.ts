import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { lstat, realpath } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { z } from 'zod';

/**
 * SOURCE_ALLOW_LOCAL: which repositories on this machine or its network a service may name.
 * - `none` (`false`, the default): `https://` on public hosts only.
 * - `anywhere` (`true`, the local stack): also `http://`, private hosts and `file://` anywhere but
 *   the platform's own files.
 * - `under` (an absolute directory): also `file://` repositories whose real path is inside it
 *   (and not in the platform's own files); `http://` and private hosts stay refused.
 */
export type LocalSources =
  { allow: 'none' } | { allow: 'anywhere' } | { allow: 'under'; directory: string };

/** `true`, `false` (1, 0) or an absolute path of an existing directory (its real path is kept). */
export const localSourcesSetting = z
  .string()
  .optional()
  .transform((value, ctx): LocalSources => {
    if (value === undefined || value === 'false' || value === '0') return { allow: 'none' };
    if (value === 'true' || value === '1') return { allow: 'anywhere' };
    if (path.isAbsolute(value) && existsSync(value) && statSync(value).isDirectory()) {
      return { allow: 'under', directory: realpathSync(value) };
    }
    ctx.addIssue({
      code: z.ZodIssueCode.custom,
      message: 'must be true, false or the absolute path of an existing directory',
    });
    return z.NEVER;
  });

/** What a service reads to know SOURCE_ALLOW_LOCAL and where the platform's own files are. */
export const localSourcesEnv = z.object({
  SOURCE_ALLOW_LOCAL: localSourcesSetting,
  /** Where `platform-dev` (secrets, builds, runtime state of the local stack) lives. */
  XDG_CACHE_HOME: z.string().min(1).optional(),
  HOME: z.string().min(1).optional(),
});

/** May the repository be `http://` or on a host with a private address? */
export const allowsLocalNetwork = (setting: LocalSources) => setting.allow === 'anywhere';
/** May the repository be a `file://` URL (somewhere: see localRepositoryProblem)? */
export const allowsLocalFiles = (setting: LocalSources) => setting.allow !== 'none';

/** SOURCE_ALLOW_LOCAL as the services check it: the setting and the trees no setting opens. */
export interface LocalSourcePolicy {
  setting: LocalSources;
  /** Real paths never fetched from, whatever the setting: the platform's own files. */
  forbidden: string[];
}

/**
 * The policy of SOURCE_ALLOW_LOCAL: never the repository checkout this process runs from, nor
 * `${XDG_CACHE_HOME:-$HOME/.cache}/platform-dev` (secrets, builds, runtime state), nor `more`
 * (the deployments service adds its BUILDS_DIR and RUNTIME_DIR).
 */
export function localSourcePolicy(
  env: z.infer<typeof localSourcesEnv>,
  more: string[] = [],
): LocalSourcePolicy {
  const cache = env.XDG_CACHE_HOME ?? path.join(env.HOME ?? homedir(), '.cache');
  const trees = [platformCheckout(), path.join(cache, 'platform-dev'), ...more];
  return { setting: env.SOURCE_ALLOW_LOCAL, forbidden: [...new Set(trees.map(realPathSoFar))] };
}

/** The root of the repository checkout this code runs from: the package.json with workspaces. */
export function platformCheckout(from: string = __dirname): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest) && 'workspaces' in JSON.parse(readFileSync(manifest, 'utf8'))) {
      return dir;
    }
    // libs/shared/{src,dist}/source: the checkout is four levels up when no manifest says so.
    if (path.dirname(dir) === dir) return path.resolve(__dirname, '../../../..');
  }
}

/**
 * Why a `file://` repository at `pathname` is refused under `policy`, or its real path (symlinks
 * resolved; for a path that does not exist yet, its nearest existing parent's real path and the
 * rest): the path the fetch must use, so that the check and git see the same directory.
 */
export async function checkLocalRepository(
  policy: LocalSourcePolicy,
  pathname: string,
): Promise<{ realPath: string } | { problem: string }> {
  if (!allowsLocalFiles(policy.setting)) {
    return { problem: 'file:// repositories are not allowed here (SOURCE_ALLOW_LOCAL)' };
  }
  const real = await realPathOf(path.resolve(pathname));
  if (real === null) return { problem: 'it is a symbolic link that leads nowhere' };
  if (policy.forbidden.some((tree) => isInside(real, tree))) {
    return { problem: "it is inside the platform's own files" };
  }
  if (policy.setting.allow === 'under' && !isInside(real, policy.setting.directory)) {
    return { problem: `local repositories must be under ${policy.setting.directory}` };
  }
  return { realPath: real };
}

/** `child` is `parent` or inside it (both absolute, resolved). */
export function isInside(child: string, parent: string): boolean {
  const relative = path.relative(parent, child);
  return (
    relative === '' ||
    (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative))
  );
}

/** Null for a symbolic link to nothing: what it leads to could appear after the check. */
async function realPathOf(absolute: string): Promise<string | null> {
  try {
    return await realpath(absolute);
  } catch {
    if (
      await lstat(absolute).then(
        () => true,
        () => false,
      )
    )
      return null;
    const parent = path.dirname(absolute);
    if (parent === absolute) return absolute;
    const realParent = await realPathOf(parent);
    return realParent === null ? null : path.join(realParent, path.basename(absolute));
  }
}

function realPathSoFar(absolute: string): string {
  try {
    return realpathSync(path.resolve(absolute));
  } catch {
    const parent = path.dirname(absolute);
    if (parent === absolute) return absolute;
    return path.join(realPathSoFar(parent), path.basename(absolute));
  }
}
