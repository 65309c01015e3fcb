import { z } from 'zod';
import { validationError, type ErrorDetail } from '../errors';

/** Turns zod issues into the contract's `details`: one `{path, message}` per problem. */
export function issuesToDetails(error: z.ZodError): ErrorDetail[] {
  return error.issues.flatMap((issue): ErrorDetail[] => {
    const path = issue.path.join('.');
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({
        path: path ? `${path}.${key}` : key,
        message: 'unknown field',
      }));
    }
    return [{ path: path || '(body)', message: issue.message }];
  });
}

/**
 * Validates input at the edge. Schemas are strict objects of plain types, so operator objects
 * such as `{ "$gt": "" }` can never reach a query.
 */
export function validate<S extends z.ZodTypeAny>(schema: S, value: unknown): z.infer<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw validationError(issuesToDetails(result.error));
  return result.data;
}

// Unicode's control characters (Cc: U+0000–U+001F and U+007F–U+009F): invisible in every
// interface, NUL among them, which no process can take in an argument or an environment
// variable. Written as ranges, not \p{Cc}, so that the OpenAPI document generated from these
// schemas carries a pattern every JSON Schema reader understands (Python's re among them).
/* eslint-disable no-control-regex -- matching control characters is the point */
const NO_CONTROL_CHARACTERS = /^[^\x00-\x1f\x7f-\x9f]*$/;
const NO_CONTROL_CHARACTERS_BUT_LINE_BREAKS = /^[^\x00-\x08\x0b-\x1f\x7f-\x9f]*$/;
/* eslint-enable no-control-regex */

/** A one-line text field (names): no control character at all (contracts.md, Trust). */
export const plainText = (max: number) =>
  z
    .string()
    .max(max, `must be at most ${max} characters`)
    .regex(NO_CONTROL_CHARACTERS, 'must not contain control characters');

/** A free text field (descriptions, commit messages): control characters but newline and tab refused. */
export const multilineText = (max: number) =>
  z
    .string()
    .max(max, `must be at most ${max} characters`)
    .regex(
      NO_CONTROL_CHARACTERS_BUT_LINE_BREAKS,
      'must not contain control characters other than newline and tab',
    );
