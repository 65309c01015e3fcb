import { waitFor } from '@platform/shared/testing';
import { WebClient } from '../support/client';
import { infra } from '../support/infra';
import { requireLocalStack } from '../support/stack';

describe('Redis stopped', () => {
  beforeAll(requireLocalStack);
  afterAll(() => infra('start', 'redis'));

  it('answers authenticated requests 503 within 2 s, never anonymously, and old sessions work when it returns', async () => {
    const client = new WebClient();
    await client.signIn();
    expect((await client.get('/api/accounts/me')).status).toBe(200);

    await infra('stop', 'redis');
    const started = Date.now();
    const res = await client.get('/api/accounts/me');
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(res.status).toBe(503);
    expect(res.body.error).toBe('SERVICE_UNAVAILABLE');

    await infra('start', 'redis');
    const me = await waitFor(
      async () => {
        const again = await client.get('/api/accounts/me');
        return again.status === 200 ? again : null;
      },
      { timeoutMs: 30_000, intervalMs: 250, what: 'the old session to work again' },
    );
    expect(me.body.id).toBeTruthy();
  });
});
