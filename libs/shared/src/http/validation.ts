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

// Unicode's control characters (Cc): invisible in every interface, NUL among them, which no
// process can take in an argument or an environment variable.
const CONTROL_CHARACTERS = /\p{Cc}/u;
const CONTROL_CHARACTERS_BUT_LINE_BREAKS = /[^\P{Cc}\n\t]/u;

/** A one-line text field (names): no control character at all (contracts.md, Trust). */
export const plainText = (max: number) =>
  z
    .string()
    .max(max, `must be at most ${max} characters`)
    .refine((text) => !CONTROL_CHARACTERS.test(text), 'must not contain control characters');

/** A free text field (descriptions, commit messages): control characters but newline and tab refused. */
export const multilineText = (max: number) =>
  z
    .string()
    .max(max, `must be at most ${max} characters`)
    .refine(
      (text) => !CONTROL_CHARACTERS_BUT_LINE_BREAKS.test(text),
      'must not contain control characters other than newline and tab',
    );
