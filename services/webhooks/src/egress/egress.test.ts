import { waitFor } from '@platform/shared/testing';
import { generateWebhookSecret } from '../deliveries/signature';
import type { ResolveHost } from './egress-guard';
import type { Receiver } from '../test/receiver';
import { useTestBed, type TestService } from '../test/test-service';

// Dial-time refusal, with a worker that refuses private addresses. Every destination here is
// on 127.0.0.0/8 and every name is answered by the test's own resolver: no DNS, no traffic out.
const bed = useTestBed();
let strict: TestService;
let permissive: TestService;
let target: Receiver;

/** `rebind.example.test` looks public while it is registered, then points at 127.0.0.1. */
let registering = false;
const resolveHost: ResolveHost = async (hostname) => {
  if (hostname === 'rebind.example.test') {
    return [{ address: registering ? '203.0.113.7' : '127.0.0.1', family: 4 }];
  }
  if (hostname === 'localhost') return [{ address: '127.0.0.1', family: 4 }];
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
};

beforeAll(async () => {
  target = await bed.receiver();
  strict = await bed.start({
    dbName: bed.newDatabase('webhooks_egress'),
    allowPrivate: false,
    resolveHost,
  });
  permissive = await bed.start({ dbName: bed.newDatabase('webhooks_egress_allowed'), resolveHost });
});

const port = () => new URL(target.url).port;

/** A webhook stored as if registered while private delivery was allowed. */
async function storedWebhook(service: TestService, url: string) {
  const p = bed.project(service);
  const webhook = await service.models.webhooks.create({
    projectId: p.projectId,
    accountId: p.accountId,
    url,
    events: ['deployment.status_changed'],
    secret: generateWebhookSecret(),
  });
  return { ...p, webhookId: webhook.id };
}

async function sendTestAndSettle(
  service: TestService,
  p: Awaited<ReturnType<typeof storedWebhook>>,
) {
  const res = await p.api.post(`${p.base}/${p.webhookId}/test`);
  expect(res.status).toBe(202);
  return waitFor(async () => {
    const [delivery] = await service.models.deliveries.find({ webhookId: p.webhookId }).lean();
    return delivery && delivery.status !== 'pending' ? delivery : null;
  });
}

describe('refusing private destinations when dialling', () => {
  it.each([
    ['a name resolving to 127.0.0.1', () => `http://localhost:${port()}/hook`],
    ['an IPv4 literal', () => `http://127.0.0.1:${port()}/hook`],
    ['IPv4 written in decimal', () => `http://2130706433:${port()}/hook`],
    ['IPv4 written in hex', () => `http://0x7f000001:${port()}/hook`],
    ['IPv4 written in octal', () => `http://0177.0.0.1:${port()}/hook`],
    ['an IPv4-mapped IPv6 literal', () => `http://[::ffff:127.0.0.1]:${port()}/hook`],
  ])('refuses %s before connecting', async (_case, url) => {
    const connectionsBefore = target.connections;
    const p = await storedWebhook(strict, url());

    const delivery = await sendTestAndSettle(strict, p);

    expect(delivery.status).toBe('failed');
    expect(delivery.attempts).toHaveLength(1);
    expect(delivery.attempts[0]).toMatchObject({
      statusCode: null,
      error: 'refused: the destination is a loopback address, which webhooks may not reach',
    });
    expect(target.connections).toBe(connectionsBefore);
  });

  it('refuses a name that resolved to a public address at registration and to 127.0.0.1 when dialled', async () => {
    const p = bed.project(strict);
    registering = true;
    const created = await p.api.post(p.base, { url: `http://rebind.example.test:${port()}/hook` });
    registering = false;
    expect(created.status).toBe(201);
    const connectionsBefore = target.connections;

    const delivery = await sendTestAndSettle(strict, { ...p, webhookId: created.body.id });

    expect(delivery.attempts[0]?.error).toBe(
      'refused: the destination is a loopback address, which webhooks may not reach',
    );
    expect(target.connections).toBe(connectionsBefore);
  });

  it('sends to the same spellings of 127.0.0.1 when private delivery is allowed', async () => {
    const requestsBefore = target.requests.length;
    const decimal = await storedWebhook(permissive, `http://2130706433:${port()}/hook`);
    const hex = await storedWebhook(permissive, `http://0x7f000001:${port()}/hook`);
    const named = await storedWebhook(permissive, `http://localhost:${port()}/hook`);

    for (const p of [decimal, hex, named]) {
      const delivery = await sendTestAndSettle(permissive, p);
      expect(delivery).toMatchObject({ status: 'succeeded', lastStatusCode: 204 });
    }
    expect(target.requests.length - requestsBefore).toBe(3);
  });
});
