import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';

/**
 * A client of an image registry's HTTP API (the OCI distribution specification), enough to push an
 * image made of tar layers: the platform's base images and, for the Kubernetes runner, a build's
 * context. Plain HTTP, no credentials: the local registry (scripts/infra kube) listens on
 * 127.0.0.1 only.
 */

/** What the image runs: the OCI image configuration's `config`. */
export interface ImageRunConfig {
  entrypoint?: string[];
  cmd?: string[];
  env?: string[];
  workingDir?: string;
  user?: string;
  /** The image's labels (OCI annotations of its configuration). */
  labels?: Record<string, string>;
}

export interface PushedImage {
  /** `<registry>/<repository>@sha256:…`: what a pod pulls. */
  reference: string;
  digest: string;
}

const MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
/** What we read: OCI manifests and Docker's (crane pushes those). */
const MANIFEST_TYPES = `${MANIFEST}, application/vnd.docker.distribution.manifest.v2+json`;
export const OCI_LAYER = 'application/vnd.oci.image.layer.v1.tar+gzip';

export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
}

interface ImageConfigBlob {
  config?: { Env?: string[] } & Record<string, unknown>;
  rootfs: { diff_ids: string[] };
}
const sha256 = (data: Buffer) => `sha256:${createHash('sha256').update(data).digest('hex')}`;

export class RegistryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RegistryError';
  }
}

async function expectStatus(res: Response, ok: number[], what: string): Promise<Response> {
  if (ok.includes(res.status)) return res;
  const body = (await res.text()).slice(0, 500);
  throw new RegistryError(`${what}: HTTP ${res.status} ${body}`);
}

export class Registry {
  /** `host:port` of the registry, e.g. `127.0.0.1:5000`. */
  constructor(readonly host: string) {}

  private url(path: string): string {
    return `http://${this.host}${path}`;
  }

  /** Uploads a blob unless the registry has it already; returns its digest. */
  async pushBlob(repository: string, data: Buffer): Promise<string> {
    const digest = sha256(data);
    const head = await fetch(this.url(`/v2/${repository}/blobs/${digest}`), { method: 'HEAD' });
    if (head.status === 200) return digest;
    const start = await expectStatus(
      await fetch(this.url(`/v2/${repository}/blobs/uploads/`), { method: 'POST' }),
      [202],
      `starting the upload of ${digest} to ${repository}`,
    );
    const location = start.headers.get('location');
    if (!location)
      throw new RegistryError(`the registry gave no upload location for ${repository}`);
    const target = new URL(location, this.url('/'));
    target.searchParams.set('digest', digest);
    await expectStatus(
      await fetch(target, {
        method: 'PUT',
        headers: { 'content-type': 'application/octet-stream' },
        body: data,
      }),
      [201],
      `uploading ${digest} to ${repository}`,
    );
    return digest;
  }

  /**
   * Pushes an image of the given layers (uncompressed tar archives, bottom first) under `tag`
   * and returns its digest reference.
   */
  pushImage(
    repository: string,
    tag: string,
    layers: Buffer[],
    run: ImageRunConfig,
  ): Promise<PushedImage> {
    return this.appendImage(null, repository, tag, layers, run);
  }

  /**
   * Pushes `base` (an image of this registry, by tag or digest) with `layers` on top and `run`
   * merged into its configuration (`env` added to the base's) under `repository:tag`. The base's
   * layers are mounted from its repository, never copied through this process.
   */
  async appendImage(
    base: string | null,
    repository: string,
    tag: string,
    layers: Buffer[],
    run: ImageRunConfig,
  ): Promise<PushedImage> {
    const from = base ? await this.readImage(base) : null;
    const layerDescriptors: Descriptor[] = [];
    for (const layer of from?.manifest.layers ?? []) {
      await this.mountBlob(repository, layer.digest, from!.repository);
      layerDescriptors.push({ ...layer, mediaType: OCI_LAYER });
    }
    const diffIds = [...(from?.config.rootfs.diff_ids ?? [])];
    for (const tar of layers) {
      const gz = gzipSync(tar);
      layerDescriptors.push({
        mediaType: OCI_LAYER,
        digest: await this.pushBlob(repository, gz),
        size: gz.length,
      });
      diffIds.push(sha256(tar));
    }
    const baseRun = from?.config.config ?? {};
    const config = Buffer.from(
      JSON.stringify({
        architecture: 'amd64',
        os: 'linux',
        config: {
          ...baseRun,
          ...(run.entrypoint && { Entrypoint: run.entrypoint }),
          ...(run.cmd && { Cmd: run.cmd }),
          ...(run.env && { Env: [...(baseRun.Env ?? []), ...run.env] }),
          ...(run.workingDir && { WorkingDir: run.workingDir }),
          ...(run.user && { User: run.user }),
          ...(run.labels && { Labels: { ...(baseRun.Labels as object), ...run.labels } }),
        },
        rootfs: { type: 'layers', diff_ids: diffIds },
      }),
    );
    return this.pushManifest(repository, tag, config, layerDescriptors);
  }

  /** Pushes `config` and a manifest of it and `layers` (pushed already) as `repository:tag`. */
  async pushManifest(
    repository: string,
    tag: string,
    config: Buffer,
    layers: Descriptor[],
  ): Promise<PushedImage> {
    const manifest = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: MANIFEST,
        config: {
          mediaType: 'application/vnd.oci.image.config.v1+json',
          digest: await this.pushBlob(repository, config),
          size: config.length,
        },
        layers,
      }),
    );
    await expectStatus(
      await fetch(this.url(`/v2/${repository}/manifests/${tag}`), {
        method: 'PUT',
        headers: { 'content-type': MANIFEST },
        body: manifest,
      }),
      [201],
      `pushing the manifest ${repository}:${tag}`,
    );
    const digest = sha256(manifest);
    return { reference: `${this.host}/${repository}@${digest}`, digest };
  }

  /** An image's manifest and configuration; `image` is `<registry>/<repository>(:tag|@digest)`. */
  async readImage(image: string) {
    const { repository, reference } = this.parse(image);
    const manifest = (await (
      await expectStatus(
        await fetch(this.url(`/v2/${repository}/manifests/${reference}`), {
          headers: { accept: MANIFEST_TYPES },
        }),
        [200],
        `reading ${image}`,
      )
    ).json()) as { config: Descriptor; layers: Descriptor[] };
    const config = (await (
      await expectStatus(
        await fetch(this.url(`/v2/${repository}/blobs/${manifest.config.digest}`)),
        [200],
        `reading the configuration of ${image}`,
      )
    ).json()) as ImageConfigBlob;
    return { repository, manifest, config };
  }

  /** A blob of `repository` as stored (a layer compressed, a configuration's exact bytes). */
  async readBlob(repository: string, digest: string): Promise<Buffer> {
    const res = await expectStatus(
      await fetch(this.url(`/v2/${repository}/blobs/${digest}`)),
      [200],
      `reading ${digest} of ${repository}`,
    );
    return Buffer.from(await res.arrayBuffer());
  }

  /** Makes a blob of `from` part of `repository` (the registry links it; nothing is copied). */
  private async mountBlob(repository: string, digest: string, from: string): Promise<void> {
    const res = await fetch(
      this.url(`/v2/${repository}/blobs/uploads/?mount=${digest}&from=${from}`),
      { method: 'POST' },
    );
    await expectStatus(res, [201], `mounting ${digest} from ${from} into ${repository}`);
  }

  private parse(image: string): { repository: string; reference: string } {
    const prefix = `${this.host}/`;
    const rest = image.startsWith(prefix) ? image.slice(prefix.length) : null;
    const match = rest?.match(/^([a-z0-9._/-]+)(?:@(sha256:[0-9a-f]{64})|:([\w.-]+))$/);
    if (!match?.[1]) throw new RegistryError(`${image} is not an image of ${this.host}`);
    return { repository: match[1], reference: match[2] ?? match[3] ?? 'latest' };
  }

  /**
   * `<registry>/<repository>@sha256:…` for `<registry>/<repository>:<tag>` as the registry has it
   * now: what a pod should run, since a node keeps what it pulled under a tag.
   */
  async pinned(image: string): Promise<string> {
    const { repository, reference } = this.parse(image);
    const digest = await this.resolve(repository, reference);
    if (!digest) throw new RegistryError(`${image}: no such image in the registry`);
    return `${this.host}/${repository}@${digest}`;
  }

  /** The digest `repository:tag` names, or null when the registry has no such tag. */
  async resolve(repository: string, tag: string): Promise<string | null> {
    const res = await fetch(this.url(`/v2/${repository}/manifests/${tag}`), {
      method: 'HEAD',
      headers: { accept: MANIFEST_TYPES },
    });
    if (res.status === 404) return null;
    await expectStatus(res, [200], `looking up ${repository}:${tag}`);
    return res.headers.get('docker-content-digest');
  }

  /** The tags of `repository` (none when the registry has no such repository). */
  async tags(repository: string): Promise<string[]> {
    const res = await fetch(this.url(`/v2/${repository}/tags/list?n=10000`));
    if (res.status === 404) return [];
    await expectStatus(res, [200], `listing the tags of ${repository}`);
    return ((await res.json()) as { tags: string[] | null }).tags ?? [];
  }

  /**
   * Deletes `repository:tag`'s manifest (every tag naming the same digest goes with it: images
   * that must be deleted alone carry a label of their own). False when there was no such tag.
   * The layers stay until the registry's garbage collection.
   */
  async remove(repository: string, tag: string): Promise<boolean> {
    const digest = await this.resolve(repository, tag);
    if (!digest) return false;
    const res = await fetch(this.url(`/v2/${repository}/manifests/${digest}`), {
      method: 'DELETE',
    });
    await expectStatus(res, [202, 404], `deleting ${repository}:${tag}`);
    return res.status === 202;
  }
}
