import { installEgressRules } from './network/egress-rules';
import { findProgram, findSystemProgram } from './programs';
import { detectResourceGroups, type ResourceGroups } from './resource-groups';
import type { SandboxOptions } from './sandbox.options';

/** Thrown by `Sandbox.create` when code cannot be run safely here; the message says what to do. */
export class SandboxUnavailableError extends Error {
  override name = 'SandboxUnavailableError';
}

export const REMEDY =
  'install bubblewrap (scripts/infra/bubblewrap.sh, run by npm test and npm start) and run the ' +
  'platform as root where it can make namespaces, network interfaces (CAP_NET_ADMIN) and cgroups, ' +
  'or, on a development machine only, set SANDBOX=none and ALLOW_UNSANDBOXED=true to run code ' +
  'without a sandbox';

/** The programs a sandbox is made with. */
export interface Programs {
  bwrap: string;
  prlimit: string;
  setpriv?: string;
}

/**
 * What a sandbox needs from this machine, checked: bwrap, root, the network tools, cgroups
 * (required in production), and the egress rules, installed here. Throws
 * SandboxUnavailableError with what to do when something is missing.
 */
export async function requireSandboxTools(options: SandboxOptions): Promise<{
  programs: Programs;
  found: Record<string, string | undefined>;
  groups: ResourceGroups | null;
}> {
  const unavailable = (why: string) => new SandboxUnavailableError(`no sandbox: ${why}; ${REMEDY}`);
  const bwrap = findProgram(options.bwrap);
  if (!bwrap)
    throw unavailable(`the bubblewrap program ${JSON.stringify(options.bwrap)} was not found`);
  if (process.getuid?.() !== 0) {
    throw unavailable(
      'the platform is not root, so it cannot give each sandbox a network of its own',
    );
  }
  const found = Object.fromEntries(
    ['prlimit', 'setpriv', 'ip', 'nsenter', 'nft'].map((name) => [name, findSystemProgram(name)]),
  );
  const missing = Object.keys(found).filter((name) => !found[name]);
  if (missing.length > 0) {
    throw unavailable(`${missing.join(', ')} not found (util-linux, iproute2, nftables)`);
  }
  const groups = detectResourceGroups(options.cgroupRoot);
  if (!groups && options.nodeEnv === 'production') {
    throw unavailable('no cgroup (v1 or v2) with the memory, cpu and pids controllers is writable');
  }
  try {
    await installEgressRules({ nft: found.nft!, ip: found.ip! }, options.egress);
  } catch (err) {
    throw unavailable(`the egress rules could not be installed: ${(err as Error).message}`);
  }
  return { programs: { bwrap, prlimit: found.prlimit!, setpriv: found.setpriv! }, found, groups };
}
