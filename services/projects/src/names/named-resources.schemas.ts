import { z } from 'zod';

export const NAME_MAX_LENGTH = 100;

// Control characters are refused: invisible in every UI, and reserved by deletedNameKeyOf.
const CONTROL_CHARACTERS = /\p{Cc}/u;

/** A project or service name: trimmed, 1–100 characters (contracts.md, Validation). */
export const nameSchema = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(NAME_MAX_LENGTH, `must be at most ${NAME_MAX_LENGTH} characters`)
  .refine((name) => !CONTROL_CHARACTERS.test(name), 'must not contain control characters');

/** What the API shows of every project and service: id, name and createdAt. */
export const toNamedResponse = (entity: { id: string; name: string; createdAt: Date }) => ({
  id: entity.id,
  name: entity.name,
  createdAt: entity.createdAt.toISOString(),
});
