import type { Types } from 'mongoose';
import {
  conflict,
  isDuplicateKeyError,
  notFound,
  variableSecretContext,
  type SecretBox,
} from '@platform/shared';
import type { ServicesRepository } from '../services/services.repository';
import type { ServicesService } from '../services/services.service';
import type { StoredVariable, VariableWrite, VariablesRepository } from './variables.repository';
import type { PutVariableBody } from './variables.schemas';

/** At most this many variables a service (contracts.md, Variables). */
export const VARIABLES_PER_SERVICE = 200;

// A PUT reads whether the variable is secret, then writes on that condition; a racing PUT that
// changes it in between makes it read again. Two racing writers settle in one more round.
const PUT_ROUNDS = 5;

/**
 * The variables of one of the caller's services. Secret values are sealed here, with the
 * variable's own context, before they reach the repository; nothing here logs a value.
 */
export class VariablesService {
  constructor(
    private readonly deps: {
      services: ServicesService;
      servicesRepository: ServicesRepository;
      variables: VariablesRepository;
      secretBox: SecretBox;
    },
  ) {}

  async listVariables(accountId: string, projectId: string, serviceId: string) {
    const { id } = await this.deps.services.requireService(accountId, projectId, serviceId);
    return this.deps.variables.list(id);
  }

  /** Every variable of a service already checked as the caller's, for the source snapshot. */
  async variablesOf(serviceId: Types.ObjectId): Promise<StoredVariable[]> {
    return this.deps.variables.list(serviceId);
  }

  /**
   * Creates or replaces one. A new one takes one of the service's slots first (a conditional
   * increment, so racing PUTs cannot pass the limit); one that turns out to exist gives it back.
   */
  async putVariable(
    accountId: string,
    projectId: string,
    serviceId: string,
    name: string,
    body: PutVariableBody,
  ): Promise<{ variable: StoredVariable; created: boolean }> {
    const { owner, id } = await this.deps.services.requireService(accountId, projectId, serviceId);
    const { variables, servicesRepository } = this.deps;
    for (let round = 0; round < PUT_ROUNDS; round += 1) {
      const wasSecret = await variables.secrecyOf(id, name);
      if (wasSecret !== null) {
        const write = this.toWrite(id, name, body.value, body.secret ?? wasSecret);
        const replaced = await variables.replace(id, name, wasSecret, write);
        if (replaced) return { variable: replaced, created: false };
        continue;
      }
      if (!(await servicesRepository.takeVariableSlot(owner, id, VARIABLES_PER_SERVICE))) {
        if (!(await servicesRepository.findLive(owner, id))) throw notFound('Service');
        throw conflict(
          `A service can have at most ${VARIABLES_PER_SERVICE} variables: delete one to add another.`,
        );
      }
      const write = this.toWrite(id, name, body.value, body.secret ?? false);
      try {
        const variable = await variables.insert({ ...owner, serviceId: id }, name, write);
        // The service can be deleted meanwhile, after its cascade ran: take the variable back.
        if (!(await servicesRepository.findLive(owner, id))) {
          await variables.remove(id, name);
          throw notFound('Service');
        }
        return { variable, created: true };
      } catch (err) {
        await servicesRepository.releaseVariableSlot(id);
        if (!isDuplicateKeyError(err)) throw err;
      }
    }
    throw conflict(`The variable ${name} is being changed by another request: retry.`);
  }

  async deleteVariable(accountId: string, projectId: string, serviceId: string, name: string) {
    const { id } = await this.deps.services.requireService(accountId, projectId, serviceId);
    if (!(await this.deps.variables.remove(id, name))) throw notFound('Variable');
    await this.deps.servicesRepository.releaseVariableSlot(id);
  }

  private toWrite(
    serviceId: Types.ObjectId,
    name: string,
    value: string,
    secret: boolean,
  ): VariableWrite {
    if (!secret) return { secret, value, sealed: null };
    const sealed = this.deps.secretBox.seal(
      value,
      variableSecretContext(serviceId.toHexString(), name),
    );
    return { secret, value: null, sealed };
  }

  /**
   * Seals anew, under ENCRYPTION_KEY, every secret variable sealed under an older key
   * (ENCRYPTION_PREVIOUS_KEYS), so an old key can be retired: a housekeeping task (compose.ts).
   * Each one is replaced only if unchanged since it was read. One that no configured key opens
   * is left as it is and counted.
   */
  async resealSecrets(): Promise<{ resealed: number; unreadable: number }> {
    const { variables, secretBox } = this.deps;
    let resealed = 0;
    let unreadable = 0;
    let after: Types.ObjectId | null = null;
    for (;;) {
      const batch = await variables.secretsAfter(after, 100);
      if (batch.length === 0) break;
      for (const variable of batch) {
        const sealed = variable.sealed;
        if (!sealed || secretBox.keyIdOf(sealed) === secretBox.currentKeyId) continue;
        const context = variableSecretContext(variable.serviceId.toHexString(), variable.name);
        let plain: string;
        try {
          plain = secretBox.open(sealed, context);
        } catch {
          unreadable++;
          continue;
        }
        const fresh = secretBox.seal(plain, context);
        if (await variables.replaceSealed(variable._id, sealed, fresh)) resealed++;
      }
      after = batch[batch.length - 1]!._id;
    }
    return { resealed, unreadable };
  }
}
