import { Router } from 'express';
import { accountIdOf, unauthorized } from '@platform/shared';
import type { AccountsRepository } from './accounts.repository';
import { toCurrentAccount } from './accounts.schemas';

export function accountsRouter(accounts: AccountsRepository): Router {
  const router = Router();
  router.get('/api/accounts/me', async (req, res) => {
    const account = await accounts.findById(accountIdOf(req));
    // A session for an account that no longer exists is no login at all.
    if (!account) throw unauthorized();
    res.json(toCurrentAccount(account));
  });
  return router;
}
