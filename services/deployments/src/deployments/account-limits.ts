import type { Types } from 'mongoose';
import type { Models } from '../models';
import type { DeploymentDoc, WaitReason } from './deployments.model';

/** ACCOUNT_MAX_BUILDS and ACCOUNT_MAX_APPS. */
export interface AccountLimitSettings {
  maxBuilds: number;
  maxApps: number;
}

/** Why a deployment still to build waits: the account's limit it is at, and how much is in use. */
export interface Waiting {
  reason: WaitReason;
  limit: number;
  inUse: number;
}

/**
 * What an account has running: its builds held by a worker, and its services that count as an
 * app (a DEPLOYED or DEPLOYING deployment, or a build held, which reserves its service's place so
 * that it can go on to DEPLOYING).
 */
export interface AccountUsage {
  builds: number;
  apps: ReadonlySet<string>;
}

/**
 * Why a deployment of `serviceId` still to build would wait, given its account's usage (itself
 * left out), or null when it may start. A deployment of a service already counted as an app
 * replaces that app, so it never waits for an app place.
 */
export function waitingFor(
  serviceId: string,
  usage: AccountUsage,
  limits: AccountLimitSettings,
): Waiting | null {
  if (usage.builds >= limits.maxBuilds) {
    return { reason: 'ACCOUNT_BUILD_LIMIT', limit: limits.maxBuilds, inUse: usage.builds };
  }
  if (!usage.apps.has(serviceId) && usage.apps.size >= limits.maxApps) {
    return { reason: 'ACCOUNT_APP_LIMIT', limit: limits.maxApps, inUse: usage.apps.size };
  }
  return null;
}

/** The waiting reason as the log and the API's `message` say it. */
export function describeWaiting({ reason, limit, inUse }: Waiting): string {
  return reason === 'ACCOUNT_BUILD_LIMIT'
    ? `the account has ${inUse} builds running (ACCOUNT_MAX_BUILDS is ${limit}); this deployment starts when one of them ends`
    : `the account has ${inUse} apps live (ACCOUNT_MAX_APPS is ${limit}); this deployment starts when one of them goes (a service deleted, or a deployment of a service not live yet failed or cancelled)`;
}

/**
 * The per-account limits, read from the deployments themselves (nothing to keep in step: a
 * deleted service, a cancel or a worker whose lease ran out frees its place at once). The
 * pipeline asks before and after each claim (pipeline/claiming.ts), the API to say why a
 * deployment waits.
 */
export class AccountLimits {
  constructor(
    private readonly models: Models,
    readonly settings: AccountLimitSettings,
  ) {}

  /** The account's usage at `now`, `excluding` one deployment (a claim checking itself). */
  async usage(
    accountId: string,
    excluding?: Types.ObjectId,
    now = new Date(),
  ): Promise<AccountUsage> {
    const notIt = excluding ? { _id: { $ne: excluding } } : {};
    // Index { accountId, status, serviceId, leaseUntil } serves all three.
    const [held, deployed, deploying] = await Promise.all([
      this.models.deployments
        .find(
          { accountId, status: 'BUILDING', leaseUntil: { $gt: now }, ...notIt },
          { serviceId: 1 },
        )
        .lean<Pick<DeploymentDoc, 'serviceId'>[]>(),
      this.models.deployments.distinct('serviceId', { accountId, status: 'DEPLOYED' }),
      this.models.deployments.distinct('serviceId', { accountId, status: 'DEPLOYING' }),
    ]);
    const apps = new Set([...deployed, ...deploying].map(String));
    for (const { serviceId } of held) apps.add(serviceId);
    return { builds: held.length, apps };
  }

  /** Why a deployment of `serviceId` of the account waits now (see waitingFor). */
  async waitingOf(accountId: string, serviceId: string): Promise<Waiting | null> {
    return waitingFor(serviceId, await this.usage(accountId), this.settings);
  }
}
