import { isIPv4 } from 'node:net';
import { z } from 'zod';
import { booleanEnv } from '@platform/shared';
import { hostResolver } from './network/dns-forwarder';
import { DEFAULT_EGRESS_DENY } from './network/egress-rules';

const CIDR4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/;
const isCidr4 = (text: string) => {
  const m = CIDR4.exec(text);
  return !!m && isIPv4(text.split('/')[0]!) && Number(m[5]) <= 32;
};

/** A comma list of IPv4 ranges in CIDR form (`10.0.0.0/8,192.168.0.0/16`); empty is none. */
const cidrList = (defaults: string[]) =>
  z
    .string()
    .optional()
    .transform((text) =>
      text === undefined
        ? defaults
        : text
            .split(',')
            .map((part) => part.trim())
            .filter(Boolean),
    )
    .refine(
      (ranges) => ranges.every(isCidr4),
      'must be IPv4 ranges such as 10.0.0.0/8, comma-separated',
    );

/**
 * The sandbox's settings, read by the deployments service (builds) and by the local runtime's
 * supervisor (apps) alike (README.md "The sandbox").
 */
export const sandboxEnv = z.object({
  /**
   * How tenants' builds and apps are isolated: `bubblewrap` (namespaces, a network of its own,
   * cgroups), or `none`: plain child processes, for a development machine without a working
   * bwrap; it needs ALLOW_UNSANDBOXED=true and is refused when NODE_ENV=production.
   */
  SANDBOX: z.enum(['bubblewrap', 'none']).default('bubblewrap'),
  /** true: SANDBOX=none is allowed (development only). */
  ALLOW_UNSANDBOXED: booleanEnv(false),
  /** The bubblewrap program: a name looked up in PATH, or an absolute path. */
  SANDBOX_BWRAP: z.string().min(1).default('bwrap'),
  /**
   * Sandboxed processes run as their own uid and gid, taken from SANDBOX_UID_BASE …
   * SANDBOX_UID_BASE + 65535: ids no user or /etc/subuid range of the machine may use (the
   * default is far above what useradd and subuid hand out).
   */
  SANDBOX_UID_BASE: z.coerce
    .number()
    .int()
    .min(1000)
    .max(2 ** 31 - 65_536)
    .default(2_000_000_000),
  /** The sandboxes' addresses: a /30 of it each (host end, sandbox end); unused by anything else. */
  SANDBOX_NETWORK_CIDR: z
    .string()
    .refine(isCidr4, 'must be an IPv4 range such as 10.213.0.0/16')
    .default('10.213.0.0/16'),
  /** IPv4 ranges no sandbox may reach: not public. The default is RFC 6890's non-global ranges. */
  SANDBOX_EGRESS_DENY: cidrList(DEFAULT_EGRESS_DENY),
  /**
   * IPv4 ranges sandboxes may reach although SANDBOX_EGRESS_DENY holds them: what counts as
   * public on this network (here the package registries resolve to 203.0.113.0/24).
   */
  SANDBOX_EGRESS_ALLOW: cidrList([]),
  /** The resolver the sandboxes' DNS forwarders ask; default the host's (/etc/resolv.conf). */
  SANDBOX_DNS: z
    .string()
    .optional()
    .transform((value) => value ?? hostResolver()),
});

export type SandboxSettings = z.infer<typeof sandboxEnv>;

/** A sandbox's memory limit in bytes: all of its processes together, swap included. */
export const memoryLimitEnv = (defaultBytes: number) =>
  z.coerce
    .number()
    .int()
    .min(64 * 1024 * 1024)
    .default(defaultBytes);

/** Processes and threads one sandbox may run at once. */
export const processLimitEnv = (defaultCount: number) =>
  z.coerce.number().int().min(8).default(defaultCount);

/** CPU time one sandbox may use per wall-clock time: 1 is one core, 0.5 half of one. */
export const cpuLimitEnv = (defaultCpus: number) =>
  z.coerce.number().min(0.01).max(1024).default(defaultCpus);

/** The size of a sandbox's /tmp in bytes. */
export const tmpLimitEnv = (defaultBytes: number) =>
  z.coerce
    .number()
    .int()
    .min(1024 * 1024)
    .default(defaultBytes);
