import type { EgressPolicy } from './network/egress-rules';
import type { SandboxSettings } from './sandbox.env';

/**
 * How tenants' code is run. `bubblewrap`: in a bwrap sandbox (the default, and the only choice
 * in production). `none`: as a plain child process, for development machines without a working
 * bwrap, and only when `allowUnsandboxed` says so.
 */
export type SandboxMode = 'bubblewrap' | 'none';

export interface SandboxOptions {
  mode: SandboxMode;
  /** Must be true for `mode: 'none'` (ALLOW_UNSANDBOXED). */
  allowUnsandboxed: boolean;
  nodeEnv: 'development' | 'test' | 'production';
  /** The bwrap program: a name looked up in PATH, or an absolute path (SANDBOX_BWRAP). */
  bwrap: string;
  /** Sandboxed processes run as uids `uidBase` … `uidBase + 65535` (SANDBOX_UID_BASE). */
  uidBase: number;
  /** After SIGTERM, how long a stopped process tree gets before SIGKILL. */
  killGraceMs: number;
  /** What a sandbox's network reaches (SANDBOX_NETWORK_CIDR, SANDBOX_EGRESS_*). */
  egress: EgressPolicy;
  /** The resolver the sandboxes' DNS forwarders ask (SANDBOX_DNS). */
  dnsUpstream: string;
  /** Where the cgroup hierarchies are mounted (default /sys/fs/cgroup). */
  cgroupRoot?: string;
}

/** The sandbox's options from the settings (the deployments service's or the supervisor's). */
export function sandboxOptions(
  config: SandboxSettings & { NODE_ENV: SandboxOptions['nodeEnv'] },
  killGraceMs: number,
): SandboxOptions {
  return {
    mode: config.SANDBOX,
    allowUnsandboxed: config.ALLOW_UNSANDBOXED,
    nodeEnv: config.NODE_ENV,
    bwrap: config.SANDBOX_BWRAP,
    uidBase: config.SANDBOX_UID_BASE,
    killGraceMs,
    egress: {
      interfacePrefix: 'psb',
      sandboxCidr: config.SANDBOX_NETWORK_CIDR,
      deny: config.SANDBOX_EGRESS_DENY,
      allow: config.SANDBOX_EGRESS_ALLOW,
    },
    dnsUpstream: config.SANDBOX_DNS,
  };
}
