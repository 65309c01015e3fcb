import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const text = async (file: string, args: string[]) =>
  (await run(file, args, { maxBuffer: 64 * 1024 * 1024 })).stdout;

/**
 * What a Kubernetes node changes on its host, read so that a test can compare before and after:
 * sysctls, nftables tables (iptables-nft's included), ipsets (kube-router's), network links,
 * mounts, cgroups and processes. Other work on the same machine changes some of these meanwhile (the sandboxes'
 * `inet platform_sandbox_*` tables and `psb*` links, per-interface sysctls, counters): those are
 * left out, and so is every sysctl that changes between two readings with nothing started.
 */
export interface HostState {
  sysctls: Record<string, string>;
  /** Each nftables table that is not a sandbox's, with its whole listing. */
  tables: Record<string, string>;
  ipsets: string[];
  links: string[];
  mounts: string[];
  cgroups: string[];
  processes: string[];
}

const VOLATILE_SYSCTL =
  /^(fs\.(dentry-state|file-nr|inode-nr|inode-state|quota\.)|kernel\.(random\.|ns_last_pid|pty\.nr)|net\.netfilter\.nf_conntrack_count|net\.(ipv4|ipv6)\.(conf|neigh)\.(?!all\.|default\.))/;

async function sysctls(): Promise<Record<string, string>> {
  const { stdout } = await run('sysctl', ['-a'], { maxBuffer: 64 * 1024 * 1024 }).catch(
    (err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }), // some keys cannot be read
  );
  const out: Record<string, string> = {};
  for (const line of stdout.split('\n')) {
    const at = line.indexOf(' = ');
    if (at < 0) continue;
    const key = line.slice(0, at);
    if (!VOLATILE_SYSCTL.test(key)) out[key] = line.slice(at + 3);
  }
  return out;
}

async function tables(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const line of (await text('nft', ['list', 'tables'])).split('\n')) {
    const [word, family, name] = line.trim().split(/\s+/);
    if (word !== 'table' || !family || !name || name.startsWith('platform_sandbox_')) continue;
    out[`${family} ${name}`] = await text('nft', ['list', 'table', family, name]);
  }
  return out;
}

/** The ipsets' names (none where the `ipset` program is not installed yet). */
async function ipsets(): Promise<string[]> {
  const listing = await text('ipset', ['list', '-n']).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return '';
    throw err;
  });
  return listing.split('\n').filter(Boolean).sort();
}

/** The processes started from the cluster's binaries or in its directories. */
function clusterProcesses(cacheDir: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    for (const link of ['exe', 'cwd']) {
      try {
        const target = readlinkSync(`/proc/${pid}/${link}`);
        const ours = [
          path.join(cacheDir, 'kube'),
          path.join(cacheDir, 'run', 'kube'),
          '/run/platform-kube',
        ];
        if (ours.some((dir) => target === dir || target.startsWith(`${dir}/`))) {
          found.push(`${pid} ${link} ${target}`);
          break;
        }
      } catch {
        // gone, or a kernel thread
      }
    }
  }
  return found;
}

export async function hostState(
  cacheDir = path.join(
    process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'),
    'platform-dev',
  ),
): Promise<HostState> {
  const links = (await text('ip', ['-o', 'link', 'show']))
    .split('\n')
    .map((line) => line.split(': ')[1]?.split('@')[0])
    .filter((name): name is string => !!name && !name.startsWith('psb'));
  const mounts = (await text('findmnt', ['-rn', '-o', 'TARGET']))
    .split('\n')
    .filter((target) => /kube|containerd|kubelet|netns|cni/.test(target));
  const cgroups = readdirSync('/sys/fs/cgroup')
    .map((controller) => `/sys/fs/cgroup/${controller}/kubepods`)
    .filter((dir) => existsSync(dir));
  return {
    sysctls: await sysctls(),
    tables: await tables(),
    ipsets: await ipsets(),
    links: links.sort(),
    mounts: mounts.sort(),
    cgroups,
    processes: clusterProcesses(cacheDir),
  };
}

/** Two readings with nothing started in between: the sysctls that changed are volatile. */
export async function stableHostState(): Promise<HostState> {
  const first = await hostState();
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const second = await hostState();
  for (const key of Object.keys(second.sysctls)) {
    if (first.sysctls[key] !== second.sysctls[key]) delete second.sysctls[key];
  }
  return second;
}

/** The differences between two states, one line each ("sysctl k: a -> b", "table … added"…). */
export function hostDifferences(before: HostState, after: HostState): string[] {
  const lines: string[] = [];
  for (const key of Object.keys(before.sysctls)) {
    if (key in after.sysctls && after.sysctls[key] !== before.sysctls[key]) {
      lines.push(`sysctl ${key}: ${before.sysctls[key]} -> ${after.sysctls[key]}`);
    }
  }
  const compareSets = (what: string, a: string[], b: string[]) => {
    for (const item of b) if (!a.includes(item)) lines.push(`${what} added: ${item}`);
    for (const item of a) if (!b.includes(item)) lines.push(`${what} removed: ${item}`);
  };
  compareSets('nftables table', Object.keys(before.tables), Object.keys(after.tables));
  for (const name of Object.keys(before.tables)) {
    if (name in after.tables && after.tables[name] !== before.tables[name]) {
      lines.push(`nftables table ${name} changed:\n${after.tables[name]}`);
    }
  }
  compareSets('ipset', before.ipsets, after.ipsets);
  compareSets('link', before.links, after.links);
  compareSets('mount', before.mounts, after.mounts);
  compareSets('cgroup', before.cgroups, after.cgroups);
  compareSets('process', before.processes, after.processes);
  return lines;
}
