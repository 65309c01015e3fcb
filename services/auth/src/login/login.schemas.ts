import { z } from 'zod';

export const loginRequest = z
  .object({
    /** A Google ID token (a JWT of a few kB at most). */
    credential: z.string().min(1).max(8192),
    /** The double-submitted value of the g_csrf_token cookie. */
    csrfToken: z.string().min(1).max(512),
  })
  .strict();
