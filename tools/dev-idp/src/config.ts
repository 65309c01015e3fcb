import { baseEnv, portEnv } from '@platform/shared';
import { z } from 'zod';

/** dev-idp's environment. It mints tokens for anyone, so it refuses to exist in production. */
export const configSchema = baseEnv
  .omit({ INTERNAL_SECRET: true })
  .extend({
    PORT: portEnv(4010),
    /** The OAuth client id minted tokens are for (`aud`); must equal the auth service's. */
    GOOGLE_CLIENT_ID: z.string().min(1),
    /** Where the signing key is kept across restarts; unset = a new in-memory key each start. */
    KEY_FILE: z.string().min(1).optional(),
  })
  .refine((env) => env.NODE_ENV !== 'production', {
    path: ['NODE_ENV'],
    message: 'dev-idp mints tokens for anyone and never runs in production',
  });

export type Config = z.infer<typeof configSchema>;
