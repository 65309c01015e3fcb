import { z } from 'zod';
import type { StoredVariable } from './variables.repository';

export const VALUE_MAX_BYTES = 32 * 1024;

/** A variable's name (contracts.md, Variables): `PORT` and `PLATFORM_*` are the platform's. */
export const variableName = z
  .string()
  .regex(/^[A-Z_][A-Z0-9_]{0,127}$/, 'must match ^[A-Z_][A-Z0-9_]{0,127}$')
  .refine((name) => name !== 'PORT' && !name.startsWith('PLATFORM_'), {
    message: 'is reserved by the platform (PORT and names starting with PLATFORM_)',
  })
  .describe('`PORT` and names starting with `PLATFORM_` are reserved (400).');

/** The path's `:name`: one that breaks the rule is 400 VALIDATION_ERROR. */
export const variableParams = z.object({ name: variableName });

export const putVariableBody = z
  .object({
    value: z
      .string()
      .refine((value) => Buffer.byteLength(value, 'utf8') <= VALUE_MAX_BYTES, {
        message: `must be at most ${VALUE_MAX_BYTES} bytes (32 KiB)`,
      })
      .describe('Up to 32 KiB (32,768 bytes of UTF-8).'),
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
