import { z } from 'zod';

export const loginRequest = z
  .object({
    /** A Google ID token (a JWT of a few kB at most). */
    credential: z
      .string()
      .min(1)
      .max(8192)
      .describe('The Google ID token (JWT) from Google Identity Services.'),
    /** The double-submitted value of the g_csrf_token cookie. */
    csrfToken: z
      .string()
      .min(1)
      .max(512)
      .describe('Must equal the `g_csrf_token` cookie sent with the request (double submit).'),
  })
  .strict();
