import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { extract, pack } from 'tar-stream';
import {
  OCI_LAYER,
  RegistryError,
  type Descriptor,
  type PushedImage,
  type Registry,
} from './registry';

/**
 * Images as one archive in the format of `docker save` (a `manifest.json` naming the
 * configuration and the layers, each a member): what kaniko reads a base image from (its cache
 * directory) and writes a built image to (`--tar-path`), so that its pod needs no registry.
 */

interface ArchiveManifest {
  Config: string;
  RepoTags?: string[];
  Layers: string[];
}

const isGzip = (data: Buffer) => data.length > 2 && data[0] === 0x1f && data[1] === 0x8b;

/** The regular files of a tar archive by name (anything else in it is left out). */
async function tarFiles(archive: Buffer): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  const reader = extract();
  const done = new Promise<void>((resolve, reject) => {
    reader.on('entry', (header, stream, next) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: unknown) => chunks.push(chunk as Buffer));
      stream.on('end', () => {
        if (header.type === 'file')
          files.set(header.name.replace(/^\.\//, ''), Buffer.concat(chunks));
        next();
      });
      stream.on('error', reject);
    });
    reader.on('finish', resolve);
    reader.on('error', reject);
  });
  Readable.from([archive]).pipe(reader);
  await done;
  return files;
}

/** A tar archive of `files` (name → content), in order, owned by root. */
export async function tarOf(files: [string, Buffer][]): Promise<Buffer> {
  const writer = pack();
  const chunks: Buffer[] = [];
  const ended = new Promise<void>((resolve, reject) => {
    writer.on('data', (chunk: unknown) => chunks.push(chunk as Buffer));
    writer.on('end', resolve);
    writer.on('error', reject);
  });
  const dirs = new Set<string>();
  for (const [name, content] of files) {
    const parts = name.split('/').slice(0, -1);
    for (let i = 1; i <= parts.length; i++) {
      const dir = parts.slice(0, i).join('/');
      if (dir && !dirs.has(dir)) {
        dirs.add(dir);
        writer.entry({ name: `${dir}/`, type: 'directory', mode: 0o755, uid: 0, gid: 0 });
      }
    }
    writer.entry({ name, mode: 0o644, uid: 0, gid: 0 }, content);
  }
  writer.finalize();
  await ended;
  return Buffer.concat(chunks);
}

/**
 * `image` of `registry` (pinned by digest) as an archive: its layers as stored (compressed), its
 * configuration's exact bytes, and the registry's manifest to go beside it (kaniko's cache keeps
 * an image's manifest as `<digest>.json`).
 */
export async function imageArchive(
  registry: Registry,
  image: string,
): Promise<{ archive: Buffer; manifest: Buffer }> {
  const { repository, manifest } = await registry.readImage(image);
  const files: [string, Buffer][] = [];
  const config = await registry.readBlob(repository, manifest.config.digest);
  const configName = `${manifest.config.digest.replace('sha256:', '')}.json`;
  const layers: string[] = [];
  for (const layer of manifest.layers) {
    const name = `${layer.digest.replace('sha256:', '')}.tar.gz`;
    files.push([name, await registry.readBlob(repository, layer.digest)]);
    layers.push(name);
  }
  const index: ArchiveManifest[] = [{ Config: configName, RepoTags: [], Layers: layers }];
  files.unshift([configName, config], ['manifest.json', Buffer.from(JSON.stringify(index))]);
  return { archive: await tarOf(files), manifest: Buffer.from(JSON.stringify(manifest)) };
}

/**
 * Pushes the one image of `archive` (what a build wrote: untrusted) as `repository:tag`, with
 * `labels` added to its configuration; layers are compressed where the archive has them plain.
 */
export async function pushImageArchive(
  registry: Registry,
  archive: Buffer,
  repository: string,
  tag: string,
  labels: Record<string, string>,
): Promise<PushedImage> {
  const files = await tarFiles(archive);
  const member = (name: string) => {
    const file = files.get(name);
    if (!file) throw new RegistryError(`the image archive has no ${name}`);
    return file;
  };
  const index = JSON.parse(member('manifest.json').toString('utf8')) as ArchiveManifest[];
  if (!Array.isArray(index) || index.length !== 1 || !Array.isArray(index[0]?.Layers)) {
    throw new RegistryError('the image archive must hold exactly one image');
  }
  const config = JSON.parse(member(index[0].Config).toString('utf8')) as {
    config?: { Labels?: Record<string, string> | null };
  };
  config.config = { ...config.config, Labels: { ...config.config?.Labels, ...labels } };
  const layers: Descriptor[] = [];
  for (const name of index[0].Layers) {
    const data = member(name);
    const gz = isGzip(data) ? data : gzipSync(data);
    layers.push({
      mediaType: OCI_LAYER,
      digest: await registry.pushBlob(repository, gz),
      size: gz.length,
    });
  }
  const image = await registry.pushManifest(
    repository,
    tag,
    Buffer.from(JSON.stringify(config)),
    layers,
  );
  return image;
}
