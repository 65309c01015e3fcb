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
