import type { Types } from 'mongoose';
import {
  conflict,
  notFound,
  outboxEntry,
  parseObjectId,
  rejectDuplicate,
  type Page,
  type PageRequest,
  type PlatformEvent,
  type Topic,
} from '@platform/shared';
import type { NamedDocument } from './named-resources.model';
import type { NamedResources } from './named-resources.repository';

/** What tells projects and services apart in the use-cases they share. */
export interface NamedResourceRules {
  /** Names it in a 404: `Project not found.` */
  what: string;
  /** At most this many live ones per owner (contracts.md, Validation). */
  quota: number;
  /** The 409 once the owner has `quota` of them. */
  quotaReachedMessage: string;
  /** The 409 of a create or rename onto a name the owner already uses (in any letter case). */
  nameTakenMessage: (name: string) => string;
}

/**
 * The use-cases ProjectsService and ServicesService share, each for an owner the caller is
 * entitled to: get, list, create within the quota, change, and delete with the event that
 * announces it. Ids come as the client sent them: a malformed one is 404 like a missing one.
 */
export class NamedResourceService<D extends NamedDocument, O extends object, T> {
  constructor(
    private readonly resources: NamedResources<D, O, T>,
    private readonly rules: NamedResourceRules,
  ) {}

  /** The client's id as stored; a malformed one is 404. */
  protected idOf(id: string): Types.ObjectId {
    return parseObjectId(id, this.rules.what);
  }

  /** The owner's live one, or 404 for a missing, deleted, malformed or foreign id alike. */
  protected async getOwned(owner: O, id: string): Promise<T> {
    const found = await this.resources.findLive(owner, this.idOf(id));
    if (!found) throw notFound(this.rules.what);
    return found;
  }

  protected listOwned(owner: O, page: PageRequest): Promise<Page<T>> {
    return this.resources.listLive(owner, page);
  }

  protected async createOwned(owner: O, values: { name: string } & Partial<D>): Promise<T> {
    // Two creates racing at the limit can both pass; the quota bounds lists, it is not billing.
    if ((await this.resources.countLive(owner)) >= this.rules.quota) {
      throw conflict(this.rules.quotaReachedMessage);
    }
    return rejectDuplicate(this.resources.insert(owner, values), this.nameTaken(values.name));
  }

  /** Changes only a live one of the owner's: another owner's is 404, never a 409. */
  protected async updateOwned(
    owner: O,
    id: string,
    changes: { name?: string } & Partial<D>,
  ): Promise<T> {
    const updated = await rejectDuplicate(
      this.resources.updateLive(owner, this.idOf(id), changes),
      this.nameTaken(changes.name ?? ''),
    );
    if (!updated) throw notFound(this.rules.what);
    return updated;
  }

  /**
   * Marks it deleted with its event (`eventOf(id)`, keyed by the id on `topic`) in one write, so
   * every read is 404 from now on; the deletion consumer then removes it (and, for a project, its
   * services).
   */
  protected async deleteOwned(
    owner: O,
    id: string,
    topic: Topic,
    eventOf: (id: Types.ObjectId) => PlatformEvent,
  ): Promise<void> {
    const key = this.idOf(id);
    const event = outboxEntry(topic, key.toHexString(), eventOf(key));
    if (!(await this.resources.markDeleted(owner, key, event))) throw notFound(this.rules.what);
  }

  private nameTaken(name: string) {
    return () => conflict(this.rules.nameTakenMessage(name));
  }
}
