import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** What one sandbox may use, all of its processes together. */
export interface GroupLimits {
  /** Memory, swap included: past it the kernel's OOM killer ends a process of the sandbox. */
  memoryBytes: number;
  /** CPU time per wall-clock time (1 = one core). */
  cpus: number;
  /** Processes and threads at once: a fork past it fails (EAGAIN). */
  processes: number;
}

/** One sandbox's cgroup (one per controller with v1). */
export interface ResourceGroup {
  /** Moves a process (and so what it starts later) into the group. */
  attach(pid: number): Promise<void>;
  /** Which limits were hit: the memory limit killed something, a fork was refused. */
  limitsHit(): Promise<{ memory: boolean; processes: boolean }>;
  /** Removes the group once its processes are gone. */
  remove(): Promise<void>;
}

export interface ResourceGroups {
  readonly version: 'v1' | 'v2';
  create(limits: GroupLimits): Promise<ResourceGroup>;
}

const PARENT = 'platform-sandbox';
const CPU_PERIOD_US = 100_000;
const V1_CONTROLLERS = ['memory', 'cpu', 'pids'] as const;

const counter = (text: string, name: string) =>
  Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);

/** rmdir of a group whose last process has just exited can meet EBUSY for a moment. */
async function removeDir(dir: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await rmdir(dir);
      return;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return;
      if (code !== 'EBUSY' || attempt >= 50) throw err;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

const uniqueName = () => `${process.pid}-${randomBytes(6).toString('hex')}`;

/** cgroup v1: the memory, cpu and pids hierarchies, each mounted at `<root>/<controller>`. */
class V1Groups implements ResourceGroups {
  readonly version = 'v1';
  constructor(private readonly root: string) {}

  async create(limits: GroupLimits): Promise<ResourceGroup> {
    const name = uniqueName();
    const dirs = Object.fromEntries(
      V1_CONTROLLERS.map((c) => [c, path.join(this.root, c, PARENT, name)]),
    ) as Record<(typeof V1_CONTROLLERS)[number], string>;
    for (const dir of Object.values(dirs)) await mkdir(dir, { recursive: true });
    const memory = String(Math.floor(limits.memoryBytes));
    await writeFile(path.join(dirs.memory, 'memory.limit_in_bytes'), memory);
    const memsw = path.join(dirs.memory, 'memory.memsw.limit_in_bytes');
    if (existsSync(memsw)) await writeFile(memsw, memory);
    await writeFile(path.join(dirs.cpu, 'cpu.cfs_period_us'), String(CPU_PERIOD_US));
    await writeFile(
      path.join(dirs.cpu, 'cpu.cfs_quota_us'),
      String(Math.max(1000, Math.round(limits.cpus * CPU_PERIOD_US))),
    );
    await writeFile(path.join(dirs.pids, 'pids.max'), String(Math.floor(limits.processes)));
    return {
      async attach(pid) {
        for (const dir of Object.values(dirs)) {
          await writeFile(path.join(dir, 'cgroup.procs'), String(pid));
        }
      },
      async limitsHit() {
        const oom = await readFile(path.join(dirs.memory, 'memory.oom_control'), 'utf8');
        const pids = await readFile(path.join(dirs.pids, 'pids.events'), 'utf8');
        return { memory: counter(oom, 'oom_kill') > 0, processes: counter(pids, 'max') > 0 };
      },
      async remove() {
        for (const dir of Object.values(dirs)) await removeDir(dir);
      },
    };
  }
}

/** cgroup v2: one unified hierarchy with the memory, cpu and pids controllers enabled. */
class V2Groups implements ResourceGroups {
  readonly version = 'v2';
  constructor(private readonly root: string) {}

  async create(limits: GroupLimits): Promise<ResourceGroup> {
    const parent = path.join(this.root, PARENT);
    await mkdir(parent, { recursive: true });
    await writeFile(path.join(parent, 'cgroup.subtree_control'), '+memory +cpu +pids');
    const dir = path.join(parent, uniqueName());
    await mkdir(dir);
    await writeFile(path.join(dir, 'memory.max'), String(Math.floor(limits.memoryBytes)));
    // Swap included: none of it, so memory.max is all the sandbox has.
    await writeFile(path.join(dir, 'memory.swap.max'), '0').catch(() => undefined);
    await writeFile(
      path.join(dir, 'cpu.max'),
      `${Math.max(1000, Math.round(limits.cpus * CPU_PERIOD_US))} ${CPU_PERIOD_US}`,
    );
    await writeFile(path.join(dir, 'pids.max'), String(Math.floor(limits.processes)));
    return {
      attach: (pid) => writeFile(path.join(dir, 'cgroup.procs'), String(pid)),
      async limitsHit() {
        const memory = await readFile(path.join(dir, 'memory.events'), 'utf8');
        const pids = await readFile(path.join(dir, 'pids.events'), 'utf8');
        return { memory: counter(memory, 'oom_kill') > 0, processes: counter(pids, 'max') > 0 };
      },
      remove: () => removeDir(dir),
    };
  }
}

/**
 * The host's cgroups, v1 or v2, whichever offers the memory, cpu and pids controllers to us
 * (writable: we run as root); null when neither does.
 */
export function detectResourceGroups(root = '/sys/fs/cgroup'): ResourceGroups | null {
  const v1 = V1_CONTROLLERS.every((c) => existsSync(path.join(root, c, 'cgroup.procs')));
  if (v1 && existsSync(path.join(root, 'memory', 'memory.limit_in_bytes'))) {
    return new V1Groups(root);
  }
  const controllers = path.join(root, 'cgroup.controllers');
  const enabled = existsSync(controllers) ? readFileSync(controllers, 'utf8').split(/\s+/) : [];
  if (['memory', 'cpu', 'pids'].every((c) => enabled.includes(c))) return new V2Groups(root);
  return null;
}
