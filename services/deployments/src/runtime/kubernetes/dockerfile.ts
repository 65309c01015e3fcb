/**
 * What the platform reads of a repository's Dockerfile before kaniko builds it
 * (docs/kubernetes-runner.md, "A repository's own Dockerfile"): the images its stages start
 * FROM. The build's pod has no way to a registry, so each must be one of the platform's own base
 * images (`platform/…` in its registry), which the platform hands in pinned by digest. Another
 * repository of that registry holds tenants' images (`apps/…`, `builds/…`): never a FROM.
 */

/** The repositories a FROM may name. */
export const BASE_IMAGE_PREFIX = 'platform/';

/** `FROM [--flag=…]… <image> [AS <stage>]`. */
const FROM_LINE = /^(\s*FROM\s+(?:--\S+\s+)*)(\S+)(\s+AS\s+(\S+))?\s*$/i;
const IMAGE = /^([a-z0-9]+(?:[._/-][a-z0-9]+)*)(?::([\w][\w.-]{0,127})|@(sha256:[0-9a-f]{64}))?$/;

/** A base image a FROM names: its repository in the registry and its tag or digest. */
export interface BaseImage {
  repository: string;
  reference: string;
}

interface FromLine {
  index: number;
  /** Null: a FROM instruction this reading does not understand (continued, say). */
  parsed: { prefix: string; image: string; rest: string; stage: string | undefined } | null;
}

function fromLines(dockerfile: string): FromLine[] {
  const found: FromLine[] = [];
  dockerfile.split('\n').forEach((raw, index) => {
    const line = raw.replace(/\r$/, '');
    if (!/^\s*FROM\s/i.test(line)) return;
    const match = FROM_LINE.exec(line);
    found.push({
      index,
      parsed: match
        ? {
            prefix: match[1]!,
            image: match[2]!,
            rest: match[3] ?? '',
            stage: match[4]?.toLowerCase(),
          }
        : null,
    });
  });
  return found;
}

/**
 * Each FROM's image that is not an earlier stage or `scratch`, as the platform's registry
 * `registryHost` names it, or the first FROM the platform cannot hand in (said as the log says it).
 */
export function baseImagesOf(
  dockerfile: string,
  registryHost: string,
): { images: Map<string, BaseImage> } | { problem: string } {
  const images = new Map<string, BaseImage>();
  const stages = new Set<string>();
  const froms = fromLines(dockerfile);
  if (froms.length === 0) return { problem: 'the Dockerfile has no FROM line' };
  for (const { index, parsed: from } of froms) {
    if (!from) {
      return {
        problem: `line ${index + 1}: a FROM must be one line, FROM [--platform=…] <image> [AS <stage>]`,
      };
    }
    const where = `line ${index + 1}: FROM ${from.image}`;
    const named = from.image.toLowerCase();
    if (!stages.has(named) && named !== 'scratch') {
      if (from.image.includes('$')) {
        return { problem: `${where}: a FROM naming its image with a variable is not supported` };
      }
      const path = from.image.startsWith(`${registryHost}/`)
        ? from.image.slice(registryHost.length + 1)
        : from.image;
      const match = IMAGE.exec(path);
      if (!match || !path.startsWith(BASE_IMAGE_PREFIX)) {
        return {
          problem: `${where}: only the platform's base images (${BASE_IMAGE_PREFIX}…, e.g. ${BASE_IMAGE_PREFIX}node:22.23.3) can be built from here`,
        };
      }
      images.set(from.image, {
        repository: match[1]!,
        reference: match[3] ?? match[2] ?? 'latest',
      });
    }
    if (from.stage) stages.add(from.stage);
  }
  return { images };
}

/** The Dockerfile with each FROM image that `pins` has (image → pinned reference) replaced. */
export function pinBaseImages(dockerfile: string, pins: Map<string, string>): string {
  const lines = dockerfile.split('\n');
  for (const { index, parsed: from } of fromLines(dockerfile)) {
    const pinned = from && pins.get(from.image);
    if (from && pinned) lines[index] = `${from.prefix}${pinned}${from.rest}`;
  }
  return lines.join('\n');
}
