import { Router } from 'express';
import { accountIdOf, unauthorized } from '@platform/shared';
import type { AccountsRepository } from './accounts.repository';

export function accountsRouter(accounts: AccountsRepository): Router {
  const router = Router();
  router.get('/api/accounts/me', async (req, res) => {
    const account = await accounts.findById(accountIdOf(req));
    // A session for an account that no longer exists is no login at all.
    if (!account) throw unauthorized();
    res.json({
      id: account.id,
      email: account.email,
      name: account.name,
      createdAt: account.createdAt.toISOString(),
    });
  });
  return router;
}
