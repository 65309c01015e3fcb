import { randomBytes } from 'node:crypto';
import { mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { runProgram, unmountUnder } from '@platform/shared';
import { BuildDisks } from './build-disk';

/** Which deployment's build. Ids are path segments: letters, digits, `_` and `-` only. */
export interface BuildRef {
  projectId: string;
  serviceId: string;
  deploymentId: string;
}

/** A build directory handed to a running build. */
export interface BuildDirectory {
  /** The deployment's directory: the platform's own files (`build.json`) live here. */
  dir: string;
  /** On the build's disk, not created yet: `fetchCommit({ into })` makes it, the build runs in it. */
  workspace: string;
  /** On the build's disk too: bound at the build's /tmp. */
  tmp: string;
}

/** A successful build that is kept: what a rollback runs again. */
export interface KeptBuild extends BuildRef, BuildDirectory {
  commitHash: string;
  /** When it was marked successful (ISO 8601): the newest are kept. */
  succeededAt: string;
}

/** What `build.json` holds: written last, atomically; a directory without it is no kept build. */
type BuildRecord = Omit<KeptBuild, 'dir' | 'workspace' | 'tmp'>;

export const KEPT_BUILDS_PER_SERVICE = 10;

/** Where builds are kept unless BUILDS_DIR says otherwise (a development machine). */
export const defaultBuildsDir = () => path.join(homedir(), '.cache/platform-dev/builds');
const RECORD = 'build.json';
const TRASH = '.trash';
const SEGMENT = /^[A-Za-z0-9_-]{1,128}$/;

function assertSegment(name: string, value: string): void {
  if (!SEGMENT.test(value)) throw new Error(`${name} is not a valid id: ${JSON.stringify(value)}`);
}

const isMissing = (err: unknown) => (err as NodeJS.ErrnoException).code === 'ENOENT';

/**
 * Where builds live: `<root>/<projectId>/<serviceId>/<deploymentId>/` holding the build's disk
 * (`disk/`, a filesystem of its own of BUILD_DISK_BYTES: build-disk.ts) with `workspace/` (the
 * checkout and what the build made, where the app starts) and `tmp/`, and, once successful,
 * `build.json`.
 * The newest `keepPerService` successful builds of a service are kept, older ones deleted.
 *
 * Several workers may share `root` (one volume): every deletion first renames the directory
 * into `<root>/.trash/` (atomic; of two workers removing the same build one wins, the other
 * finds nothing), so a build is either whole with its `build.json` or gone, and two workers
 * pruning at once delete the same builds, never a newer one.
 */
export class BuildStore {
  private readonly keepPerService: number;
  private readonly disks: BuildDisks;

  constructor(
    private readonly root: string,
    {
      keepPerService = KEPT_BUILDS_PER_SERVICE,
      disks = new BuildDisks(0),
    }: { keepPerService?: number; disks?: BuildDisks } = {},
  ) {
    if (!path.isAbsolute(root)) throw new Error(`the builds directory must be absolute: ${root}`);
    this.keepPerService = keepPerService;
    this.disks = disks;
  }

  /**
   * A fresh directory for the deployment's build (an earlier attempt's, kept or not, is
   * discarded first); its `workspace` does not exist yet.
   */
  async prepare(ref: BuildRef): Promise<BuildDirectory> {
    const dir = this.buildDir(ref);
    await this.remove(dir);
    await mkdir(dir, { recursive: true });
    return { dir, ...(await this.disks.create(dir)) };
  }

  /** Whether a build used (nearly) all of its disk: what its log says when it failed. */
  isFull(ref: BuildRef): Promise<boolean> {
    return this.disks.isFull(this.buildDir(ref));
  }

  /** Makes a kept build's files available to the app about to start from it (after a reboot). */
  open(build: KeptBuild): Promise<void> {
    return this.disks.open(build.dir);
  }

  /**
   * Marks the deployment's build successful (its `build.json`, written atomically), then
   * deletes the service's successful builds beyond the newest `keepPerService`, except those
   * of `protect` (the deployment serving now, whose app runs from its build). Resolves with
   * the kept build. Its workspace is sealed first (sealWorkspace): every app that runs it reads
   * it as it was built.
   */
  async markSuccessful(
    ref: BuildRef,
    { commitHash, protect = [] }: { commitHash: string; protect?: string[] },
  ): Promise<KeptBuild> {
    const dir = this.buildDir(ref);
    await this.disks.clearTmp(dir);
    await sealWorkspace(this.disks.paths(dir).workspace);
    const record: BuildRecord = { ...ref, commitHash, succeededAt: new Date().toISOString() };
    const temporary = path.join(dir, `.${RECORD}.${randomBytes(4).toString('hex')}`);
    await writeFile(temporary, `${JSON.stringify(record, null, 2)}\n`);
    await rename(temporary, path.join(dir, RECORD));
    await this.prune(ref, { protect: [...protect, ref.deploymentId] });
    return { ...record, dir, ...this.disks.paths(dir) };
  }

  /** The kept build of a deployment, or null when it never succeeded or was deleted (rollback: 409). */
  async find(ref: BuildRef): Promise<KeptBuild | null> {
    const dir = this.buildDir(ref);
    const record = await readRecord(dir);
    return record ? { ...record, dir, ...this.disks.paths(dir) } : null;
  }

  /** The service's kept builds, newest first. */
  async list(service: Omit<BuildRef, 'deploymentId'>): Promise<KeptBuild[]> {
    const serviceDir = this.serviceDir(service);
    let names: string[];
    try {
      names = await readdir(serviceDir);
    } catch (err) {
      if (isMissing(err)) return [];
      throw err;
    }
    const builds: KeptBuild[] = [];
    for (const deploymentId of names.filter((name) => SEGMENT.test(name))) {
      const found = await this.find({ ...service, deploymentId });
      if (found) builds.push(found);
    }
    return builds.sort(
      (a, b) =>
        b.succeededAt.localeCompare(a.succeededAt) || b.deploymentId.localeCompare(a.deploymentId),
    );
  }

  /**
   * Deletes the service's kept builds beyond the newest `keepPerService`, never one of
   * `protect`; resolves with the deployment ids deleted. Builds still running (no `build.json`)
   * are not touched.
   */
  async prune(
    service: Omit<BuildRef, 'deploymentId'>,
    { protect = [] }: { protect?: string[] } = {},
  ): Promise<string[]> {
    const kept = await this.list(service);
    const old = kept
      .slice(this.keepPerService)
      .filter((build) => !protect.includes(build.deploymentId));
    for (const build of old) await this.remove(build.dir);
    return old.map((build) => build.deploymentId);
  }

  /** Deletes a deployment's build directory (a failed or cancelled build, kept or not). */
  async discard(ref: BuildRef): Promise<void> {
    return this.remove(this.buildDir(ref));
  }

  /** Deletes every build of a service (`service.deleted`). */
  async removeService(service: Omit<BuildRef, 'deploymentId'>): Promise<void> {
    return this.remove(this.serviceDir(service));
  }

  /** Deletes every build of a project (`project.deleted`). */
  async removeProject(projectId: string): Promise<void> {
    assertSegment('projectId', projectId);
    return this.remove(path.join(this.root, projectId));
  }

  private serviceDir({ projectId, serviceId }: Omit<BuildRef, 'deploymentId'>): string {
    assertSegment('projectId', projectId);
    assertSegment('serviceId', serviceId);
    return path.join(this.root, projectId, serviceId);
  }

  private buildDir(ref: BuildRef): string {
    assertSegment('deploymentId', ref.deploymentId);
    return path.join(this.serviceDir(ref), ref.deploymentId);
  }

  /** Moves `dir` into the trash (atomic: it is whole or gone), then deletes it there. */
  private async remove(dir: string): Promise<void> {
    const trash = path.join(this.root, TRASH);
    await mkdir(trash, { recursive: true });
    const target = path.join(trash, `${path.basename(dir)}-${randomBytes(6).toString('hex')}`);
    try {
      await rename(dir, target);
    } catch (err) {
      if (isMissing(err)) return;
      throw err;
    }
    // A disk still mounted would be emptied by rm, and its mount point left behind.
    await unmountUnder(target);
    await rm(target, { recursive: true, force: true });
  }
}

/**
 * A kept build's workspace made root's (when the platform is root) and readable by every uid,
 * writable by none other: the apps that run it, each as a uid of its own, read it (the sandbox
 * binds it read-only as well) and none hands it over or changes it for the next. Once, when the
 * build is kept, not at every start. GNU `chown -R` (-P, the default) and `chmod -R` never follow
 * a link the build left.
 */
async function sealWorkspace(workspace: string): Promise<void> {
  if (process.getuid?.() === 0) await runProgram('chown', ['-R', '-P', '0:0', '--', workspace]);
  await runProgram('chmod', ['-R', 'u+rwX,go+rX,go-w', '--', workspace]);
}

async function readRecord(dir: string): Promise<BuildRecord | null> {
  try {
    return JSON.parse(await readFile(path.join(dir, RECORD), 'utf8')) as BuildRecord;
  } catch (err) {
    if (isMissing(err)) return null;
    throw err;
  }
}
