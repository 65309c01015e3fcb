import { z } from 'zod';
import { variableNameRule, variableValueRule } from '@platform/shared';
import type { StoredVariable } from './variables.repository';

/**
 * A variable's name (contracts.md, Variables): `PORT` and `PLATFORM_*` are the platform's. The
 * rules are libs/shared's source-rules, which the deployments service applies again.
 */
export const variableName = variableNameRule().describe(
  '`PORT` and names starting with `PLATFORM_` are reserved (400).',
);

/** The path's `:name`: one that breaks the rule is 400 VALIDATION_ERROR. */
export const variableParams = z.object({ name: variableName });

export const putVariableBody = z
  .object({
    value: variableValueRule().describe(
      'Up to 32 KiB (32,768 bytes of UTF-8), without the NUL character (400). Newlines and any other character are kept as they are: the value only ever reaches a build and an app as an environment variable, never as an argument.',
    ),
    /** Absent: a new variable is plain, an existing one keeps what it was. */
    secret: z
      .boolean()
      .optional()
      .describe(
        'Encrypt the value at rest and never return it; where a build or the app prints it, its log shows `****`. Left out: a new variable is plain, an existing one keeps what it was.',
      ),
  })
  .strict();
export type PutVariableBody = z.infer<typeof putVariableBody>;

/** What the API shows of a variable: a secret one's value never. */
export const toVariableResponse = (variable: StoredVariable) => ({
  name: variable.name,
  ...(variable.secret ? {} : { value: variable.value ?? '' }),
  secret: variable.secret,
  updatedAt: variable.updatedAt.toISOString(),
});

/** What the deployment pipeline gets: plain values, and secret ones still sealed. */
export const toSourceVariable = (variable: StoredVariable) =>
  variable.secret
    ? { name: variable.name, secret: true, sealed: variable.sealed ?? '' }
    : { name: variable.name, secret: false, value: variable.value ?? '' };
