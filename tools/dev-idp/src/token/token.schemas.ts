import { z } from 'zod';

export const tokenRequest = z
  .object({
    email: z.string().trim().toLowerCase().email().max(254),
    name: z.string().trim().min(1).max(100),
  })
  .strict();
