import { Router } from 'express';
import { SIGN_IN_PAGE, SIGN_IN_PAGE_CSP } from './sign-in.page';

export function signInRouter(): Router {
  const router = Router();
  router.get('/', (_req, res) => {
    res
      .set({
        'Content-Security-Policy': SIGN_IN_PAGE_CSP,
        'Cache-Control': 'no-store',
        'X-Content-Type-Options': 'nosniff',
        'Referrer-Policy': 'no-referrer',
      })
      .type('html')
      .send(SIGN_IN_PAGE);
  });
  return router;
}
