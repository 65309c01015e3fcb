import { z } from 'zod';

export const NAME_MAX_LENGTH = 100;

// Control characters (Unicode's Cc: U+0000–U+001F, U+007F–U+009F) are refused: invisible in
// every UI, and reserved by deletedNameKeyOf. A pattern both JavaScript and the OpenAPI
// document's readers (JSON Schema tools, Python's re) understand, so the document says it too.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const NO_CONTROL_CHARACTERS = /^[^\x00-\x1f\x7f-\x9f]*$/;

/** A project or service name: trimmed, 1–100 characters (contracts.md, Validation). */
export const nameSchema = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(NAME_MAX_LENGTH, `must be at most ${NAME_MAX_LENGTH} characters`)
  .regex(NO_CONTROL_CHARACTERS, 'must not contain control characters')
  .describe(
    'Trimmed; 1–100 characters, no control characters; unique per account, compared case-insensitively after Unicode NFC normalisation (409).',
  );

/** What the API shows of every project and service: id, name and createdAt. */
export const toNamedResponse = (entity: { id: string; name: string; createdAt: Date }) => ({
  id: entity.id,
  name: entity.name,
  createdAt: entity.createdAt.toISOString(),
});
