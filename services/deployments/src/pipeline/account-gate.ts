import { insertOnce } from '@platform/shared';
import { waitingFor, type AccountLimits } from '../deployments/account-limits';
import type { DeploymentDoc } from '../deployments/deployments.model';
import type { Models } from '../models';
import type { AccountGateDoc } from './account-gate.model';

/** Times a claimed build counts its account's usage again when racing claims moved the gate. */
const GATE_ROUNDS = 5;

/**
 * Whether a build just claimed may keep its claim: its account's limits (ACCOUNT_MAX_BUILDS,
 * ACCOUNT_MAX_APPS) hold with it counted, whatever other replicas claim at the same moment.
 *
 * Optimistic concurrency on the account's gate document: read the gate's number, count the
 * account's usage from the deployments (every claim already made included: this one's, and
 * racing ones'), then move the number on only if nobody moved it meanwhile. Of two claims that
 * counted the same usage, one moves it and stays; the other reads the number again and counts
 * again, and then sees the first (claimed before its number moved, so before it was read again).
 * So a claim stays only on a count that included every claim that stayed before it: two replicas
 * never both keep an account's last place. A racing claim that does not stay in the end is
 * counted too: two may then both give their claim up (the next look takes the place), never both
 * keep it.
 */
export class AccountGate {
  constructor(
    private readonly models: Models,
    private readonly limits: AccountLimits,
  ) {}

  async keepsItsPlace(claimed: DeploymentDoc): Promise<boolean> {
    const { accountId } = claimed;
    for (let round = 0; round < GATE_ROUNDS; round++) {
      const gate = await this.models.accountGates.findById(accountId).lean<AccountGateDoc>();
      const usage = await this.limits.usage(accountId, claimed._id);
      if (waitingFor(claimed.serviceId, usage, this.limits.settings)) return false;
      if (await this.move(accountId, gate?.seq)) return true;
    }
    return false;
  }

  /** Moves the gate on from `seq` (made at 1 when there is none yet); false when someone did. */
  private async move(accountId: string, seq: number | undefined): Promise<boolean> {
    if (seq === undefined) {
      return insertOnce(this.models.accountGates.create({ _id: accountId, seq: 1 }));
    }
    const moved = await this.models.accountGates.updateOne(
      { _id: accountId, seq },
      { $inc: { seq: 1 } },
    );
    return moved.modifiedCount === 1;
  }
}
