import type { Types } from 'mongoose';
import { outboxFields, type OutboxEntry } from '@platform/shared';

/** What a project and a service document have in common. */
export interface NamedDocument {
  _id: Types.ObjectId;
  name: string;
  /** nameKeyOf(name) while live, deletedNameKeyOf(id) once deleted; unique per owner. */
  nameKey: string;
  createdAt: Date;
  /** Set by DELETE: from then on the document reads as 404 until the cascade removes it. */
  deletedAt: Date | null;
  outbox: OutboxEntry[];
  outboxPending: boolean;
}

/** The schema fields of a NamedDocument, spread into each model's schema beside its owner's. */
export const namedDocumentFields = {
  name: { type: String, required: true },
  nameKey: { type: String, required: true },
  createdAt: { type: Date, required: true },
  deletedAt: { type: Date, default: null },
  ...outboxFields,
};
