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
}

export interface PushedImage {
  /** `<registry>/<repository>@sha256:…`: what a pod pulls. */
  reference: string;
  digest: string;
}

const MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
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
  async pushImage(
    repository: string,
    tag: string,
    layers: Buffer[],
    run: ImageRunConfig,
  ): Promise<PushedImage> {
    const blobs = layers.map((tar) => ({ tar, gz: gzipSync(tar) }));
    const layerDescriptors = [];
    for (const { gz } of blobs) {
      layerDescriptors.push({
        mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip',
        digest: await this.pushBlob(repository, gz),
        size: gz.length,
      });
    }
    const config = Buffer.from(
      JSON.stringify({
        architecture: 'amd64',
        os: 'linux',
        config: {
          Entrypoint: run.entrypoint,
          Cmd: run.cmd,
          Env: run.env,
          WorkingDir: run.workingDir,
          User: run.user,
        },
        rootfs: { type: 'layers', diff_ids: blobs.map(({ tar }) => sha256(tar)) },
      }),
    );
    const manifest = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: MANIFEST,
        config: {
          mediaType: 'application/vnd.oci.image.config.v1+json',
          digest: await this.pushBlob(repository, config),
          size: config.length,
        },
        layers: layerDescriptors,
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

  /**
   * `<registry>/<repository>@sha256:…` for `<registry>/<repository>:<tag>` as the registry has it
   * now: what a pod should run, since a node keeps what it pulled under a tag.
   */
  async pinned(image: string): Promise<string> {
    const prefix = `${this.host}/`;
    const at = image.lastIndexOf(':');
    if (!image.startsWith(prefix) || at < prefix.length) {
      throw new RegistryError(`${image} is not a tagged image of ${this.host}`);
    }
    const repository = image.slice(prefix.length, at);
    const digest = await this.resolve(repository, image.slice(at + 1));
    if (!digest) throw new RegistryError(`${image}: no such image in the registry`);
    return `${prefix}${repository}@${digest}`;
  }

  /** The digest `repository:tag` names, or null when the registry has no such tag. */
  async resolve(repository: string, tag: string): Promise<string | null> {
    const res = await fetch(this.url(`/v2/${repository}/manifests/${tag}`), {
      method: 'HEAD',
      headers: { accept: `${MANIFEST}, application/vnd.docker.distribution.manifest.v2+json` },
    });
    if (res.status === 404) return null;
    await expectStatus(res, [200], `looking up ${repository}:${tag}`);
    return res.headers.get('docker-content-digest');
  }
}
