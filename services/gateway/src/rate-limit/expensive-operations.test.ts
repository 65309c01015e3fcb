import type { Request } from 'express';
import { useRunning } from '@platform/shared/testing';
import { newAccountId, startAccountsGateway } from '../test/accounts-auth';
import { expectCountdownOfThree, expectRefused, limitsPerMinute } from '../test/rate-limit-answers';
import { expensiveOperationAt, isOperation, type ExpensiveOperation } from './rules';

const TEN_MINUTES_S = 600;

/** Paths of one new project, service, deployment, webhook and delivery (lower-case hex ids). */
function newPaths() {
  const [project, service, deployment, webhook, delivery] = Array.from({ length: 5 }, newAccountId);
  const projectPath = `/api/projects/${project}`;
  const deployments = `${projectPath}/services/${service}/deployments`;
  const webhookPath = `${projectPath}/webhooks/${webhook}`;
  return {
    project: project!,
    trigger: deployments,
    redeploy: `${deployments}/${deployment}/redeploy`,
    rollback: `${deployments}/${deployment}/rollback`,
    cancel: `${deployments}/${deployment}/cancel`,
    deployments,
    webhookTest: `${webhookPath}/test`,
    redeliver: `${webhookPath}/deliveries/${delivery}/redeliver`,
  };
}

/** The path with its ids in upper case, as a client may send them. */
const upperIds = (path: string) => path.replace(/[0-9a-f]{24}/g, (id) => id.toUpperCase());

/** The operation's own window (10 minutes here), not the one-minute one of every request. */
const expectRateLimitedFor = (response: Parameters<typeof expectRefused>[0]) =>
  expectRefused(response, [61, TEN_MINUTES_S]);

describe('expensive operations', () => {
  const gateway = useRunning(() =>
    startAccountsGateway({
      ...limitsPerMinute(1000, 500, 2000),
      DEPLOY_RATE_LIMIT: '3',
      DEPLOY_RATE_WINDOW: '10m',
      WEBHOOK_TEST_RATE_LIMIT: '1',
      WEBHOOK_TEST_RATE_WINDOW: '10m',
      REDELIVER_RATE_LIMIT: '2',
      REDELIVER_RATE_WINDOW: '10m',
    }),
  );
  const post = (cookie: string, path: string) =>
    gateway().request(path, { method: 'POST', cookie, body: {} });
  /** The requests of this test's project that reached `service`. */
  const reached = (service: 'deployments' | 'webhooks', project: string) =>
    gateway().stubs[service].received.filter((r) => r.path.toLowerCase().includes(project));

  it('limit deployments started per account: triggers, redeploys and rollbacks together, however the path is spelled', async () => {
    const paths = newPaths();
    const cookie = await gateway().logInAs(newAccountId());

    const allowed = [
      await post(cookie, paths.trigger),
      await post(cookie, upperIds(paths.redeploy)),
      await post(cookie, `${paths.rollback}/`),
    ];
    const refused = [
      await post(cookie, paths.trigger),
      await post(cookie, `${paths.trigger}//?x=1`),
      await post(cookie, paths.redeploy.replace('/redeploy', '/ReDeploy')),
      await post(cookie, paths.rollback.replace('/rollback', '/%72ollback')),
      await post(cookie, paths.redeploy.replace('/deployments/', '/deployments//')),
    ];

    expect(allowed.map((r) => r.status)).toEqual([200, 200, 200]);
    for (const answer of refused) expectRateLimitedFor(answer);
    expect(reached('deployments', paths.project)).toHaveLength(3);
    // Other requests of the account, and other operations, go on.
    expect((await gateway().request(paths.deployments, { cookie })).status).toBe(200);
    expect((await post(cookie, paths.cancel)).status).toBe(200);
    expect((await post(cookie, paths.webhookTest)).status).toBe(200);
  });

  it('limit webhook test sends per account, on their own', async () => {
    const paths = newPaths();
    const cookie = await gateway().logInAs(newAccountId());

    const first = await post(cookie, paths.webhookTest);
    const again = await post(cookie, `${upperIds(paths.webhookTest)}/`);

    expect(first.status).toBe(200);
    expectRateLimitedFor(again);
    expect(reached('webhooks', paths.project)).toHaveLength(1);
    expect((await post(cookie, paths.redeliver)).status).toBe(200);
    expect((await post(cookie, paths.trigger)).status).toBe(200);
  });

  it('limit redeliveries per account, on their own', async () => {
    const paths = newPaths();
    const cookie = await gateway().logInAs(newAccountId());

    const statuses = [
      (await post(cookie, paths.redeliver)).status,
      (await post(cookie, upperIds(paths.redeliver))).status,
    ];
    const refused = await post(cookie, `${paths.redeliver}/`);

    expect(statuses).toEqual([200, 200]);
    expectRateLimitedFor(refused);
    expect(reached('webhooks', paths.project)).toHaveLength(2);
    expect((await post(cookie, paths.webhookTest)).status).toBe(200);
  });

  it('count each account on its own, all its sessions together', async () => {
    const paths = newPaths();
    const account = newAccountId();
    const one = await gateway().logInAs(account);
    const other = await gateway().logInAs(account);
    for (const cookie of [one, other, one]) await post(cookie, paths.trigger);

    const sameAccount = await post(other, paths.trigger);
    const anotherAccount = await post(await gateway().logInAs(newAccountId()), paths.trigger);

    expectRateLimitedFor(sameAccount);
    expect(anotherAccount.status).toBe(200);
  });

  it('tell in the RateLimit fields the limit that applies: the operation’s, then the general one', async () => {
    const paths = newPaths();
    const account = newAccountId();
    const cookie = await gateway().logInAs(account);

    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await post(cookie, paths.trigger));
    const ordinary = await gateway().request(paths.deployments, { cookie });

    // The operation's window: 10 minutes, not one.
    expectCountdownOfThree(answers, [591, TEN_MINUTES_S]);
    // The account's: the login and five requests of its 500 a minute.
    expect(ordinary.status).toBe(200);
    expect(ordinary.headers.get('ratelimit-limit')).toBe('500');
    expect(ordinary.headers.get('ratelimit-remaining')).toBe('494');
    const key = `${gateway().config.REDIS_PREFIX}rl:deploy:${account}`;
    expect(await gateway().redis.get(key)).toBe('4');
    expect(await gateway().redis.pttl(key)).toBeGreaterThan(590_000);
  });
});

describe('isOperation', () => {
  const ids = { p: '65f0000000000000000000aa', s: '65f0000000000000000000bb' };
  const base = `/api/projects/${ids.p}/services/${ids.s}/deployments`;
  const webhook = `/api/projects/${ids.p}/webhooks/${ids.s}`;
  const request = (method: string, originalUrl: string) => ({ method, originalUrl }) as Request;

  it.each<[string, string, ExpensiveOperation]>([
    ['POST', base, 'deploy'],
    ['POST', `${base}/`, 'deploy'],
    ['POST', `${base}?wait=1`, 'deploy'],
    ['POST', base.toUpperCase(), 'deploy'],
    ['POST', `${base}/ABC123/redeploy`, 'deploy'],
    ['POST', `${base}/abc123/Rollback//`, 'deploy'],
    ['POST', `${base}/abc123/%72ollback`, 'deploy'],
    ['POST', `${base}//abc123//redeploy`, 'deploy'],
    ['POST', `/api/projects/${ids.p}//services/${ids.s}/deployments`, 'deploy'],
    ['POST', `${webhook}/test`, 'webhookTest'],
    ['POST', `${webhook}/TEST/`, 'webhookTest'],
    ['POST', `${webhook}/deliveries/ABC/redeliver`, 'redeliver'],
  ])('counts %s %s as %s', (method, path, operation) => {
    expect(isOperation(request(method, path), operation)).toBe(true);
  });

  it.each<[string, string, ExpensiveOperation]>([
    ['GET', base, 'deploy'],
    ['POST', `${base}/abc123`, 'deploy'],
    ['POST', `${base}/abc123/cancel`, 'deploy'],
    ['POST', `${base}/abc123/redeploy/more`, 'deploy'],
    ['POST', `/api/projects/${ids.p}/services/${ids.s}`, 'deploy'],
    ['GET', `${webhook}/test`, 'webhookTest'],
    ['POST', `${webhook}/deliveries`, 'redeliver'],
    ['POST', `${webhook}/test`, 'redeliver'],
  ])('does not count %s %s as %s', (method, path, operation) => {
    expect(isOperation(request(method, path), operation)).toBe(false);
  });
});

describe('expensiveOperationAt', () => {
  it.each([
    ['post', '/api/projects/{projectId}/services/{serviceId}/deployments', 'deploy'],
    [
      'post',
      '/api/projects/{projectId}/services/{serviceId}/deployments/{deploymentId}/redeploy',
      'deploy',
    ],
    [
      'post',
      '/api/projects/{projectId}/services/{serviceId}/deployments/{deploymentId}/rollback',
      'deploy',
    ],
    ['post', '/api/projects/{projectId}/webhooks/{webhookId}/test', 'webhookTest'],
    [
      'post',
      '/api/projects/{projectId}/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver',
      'redeliver',
    ],
    ['get', '/api/projects/{projectId}/services/{serviceId}/deployments', undefined],
    [
      'post',
      '/api/projects/{projectId}/services/{serviceId}/deployments/{deploymentId}/cancel',
      undefined,
    ],
    ['post', '/api/projects/{projectId}/webhooks', undefined],
  ])('finds in %s %s the operation %s (documented paths too)', (method, path, operation) => {
    expect(expensiveOperationAt(method, path)).toBe(operation);
  });
});
