import { Types } from 'mongoose';
import { waitFor } from '@platform/shared/testing';
import type { ReceivedRequest, Receiver } from '../test/receiver';
import { testSecrets } from '../test/secrets';
import { verifyStandardWebhook } from '../test/signatures';
import { subscribe, useTestBed, type TestProject, type TestService } from '../test/test-service';

// Real MongoDB, Kafka and receivers on 127.0.0.1; the overlap is short (WEBHOOK_SECRET_OVERLAP)
// and the housekeeping runs often, so a window opens and closes within a test.
const bed = useTestBed();
const OVERLAP_MS = 3_000;
let service: TestService;

beforeAll(async () => {
  service = await bed.start({
    dbName: bed.newDatabase('webhooks_rotation'),
    secretOverlapMs: OVERLAP_MS,
    housekeepingIntervalMs: 200,
  });
});

const rawWebhook = (id: string) =>
  service.models.webhooks.collection.findOne({ _id: new Types.ObjectId(id) });

/** A project with a webhook to a new receiver: its id and first secret. */
async function subscribed() {
  const p = bed.project(service);
  const target = await bed.receiver();
  return { p, target, webhook: await subscribe(p, `${target.url}/hook`) };
}

async function rotate(p: TestProject, webhookId: string): Promise<string> {
  const res = await p.api.patch(`${p.base}/${webhookId}`, { rotateSecret: true });
  expect(res.status).toBe(200);
  expect(res.body.secret).toMatch(/^whsec_/);
  return res.body.secret;
}

/** Sends the webhook a test event and returns the request its receiver got. */
async function testEvent(p: TestProject, webhookId: string, target: Receiver) {
  const before = target.requests.length;
  const res = await p.api.post(`${p.base}/${webhookId}/test`);
  expect(res.status).toBe(202);
  return (await target.waitForRequests(before + 1))[before]!;
}

const signaturesOf = (request: ReceivedRequest) =>
  String(request.headers['webhook-signature']).split(' ');

/** Waits until the previous secret's overlap, as stored, is over. */
async function overlapEnds(webhookId: string) {
  const expiresAt = (await rawWebhook(webhookId))?.previousSecretExpiresAt as Date;
  expect(expiresAt.getTime() - Date.now()).toBeLessThanOrEqual(OVERLAP_MS);
  await waitFor(() => Date.now() > expiresAt.getTime(), {
    timeoutMs: OVERLAP_MS + 5_000,
    what: 'the overlap to end',
  });
}

describe('rotating a webhook secret', () => {
  it('signs with the new and the previous secret during the overlap, then with the new one alone', async () => {
    const { p, target, webhook } = await subscribed();

    const newSecret = await rotate(p, webhook.id);
    const during = await testEvent(p, webhook.id, target);

    expect(newSecret).not.toBe(webhook.secret);
    expect(signaturesOf(during)).toHaveLength(2);
    expect(verifyStandardWebhook(newSecret, during)).toBe(true);
    expect(verifyStandardWebhook(webhook.secret, during)).toBe(true);

    await overlapEnds(webhook.id);
    const after = await testEvent(p, webhook.id, target);

    expect(signaturesOf(after)).toHaveLength(1);
    expect(verifyStandardWebhook(newSecret, after)).toBe(true);
    expect(verifyStandardWebhook(webhook.secret, after)).toBe(false);
  });

  it('drops the previous secret from the record once its overlap is over', async () => {
    const { p, webhook } = await subscribed();
    await rotate(p, webhook.id);
    expect((await rawWebhook(webhook.id))?.previousSecret).toMatch(/^v1:test:/);

    await overlapEnds(webhook.id);

    await waitFor(async () => (await rawWebhook(webhook.id))?.previousSecret === null, {
      what: 'the previous secret dropped',
    });
    expect((await rawWebhook(webhook.id))?.previousSecretExpiresAt).toBeNull();
  });

  it('keeps only the secret just replaced when rotating twice within the overlap', async () => {
    const { p, target, webhook } = await subscribed();

    const second = await rotate(p, webhook.id);
    const third = await rotate(p, webhook.id);
    const request = await testEvent(p, webhook.id, target);

    expect(signaturesOf(request)).toHaveLength(2);
    expect(verifyStandardWebhook(third, request)).toBe(true);
    expect(verifyStandardWebhook(second, request)).toBe(true);
    expect(verifyStandardWebhook(webhook.secret, request)).toBe(false);
  });

  it('rotates the same webhook through an upper-case id, its secret still bound to the canonical id', async () => {
    const { p, target, webhook } = await subscribed();

    const newSecret = await rotate(p, webhook.id.toUpperCase());
    const request = await testEvent(p, webhook.id.toUpperCase(), target);

    expect(verifyStandardWebhook(newSecret, request)).toBe(true);
    expect(request.body).toContain(`"webhookId":"${webhook.id}"`);
    const stored = await rawWebhook(webhook.id);
    expect(testSecrets().open({ id: webhook.id, secret: stored!.secret })).toBe(newSecret);
    expect(await service.models.webhooks.countDocuments({ projectId: p.projectId })).toBe(1);
  });

  it('of racing rotations, keeps secrets that were answered: the last as current, the one it replaced as previous', async () => {
    const { p, webhook } = await subscribed();

    const answers = await Promise.all(
      Array.from({ length: 5 }, () =>
        p.api.patch(`${p.base}/${webhook.id}`, { rotateSecret: true }),
      ),
    );

    expect(answers.map((res) => res.status)).toEqual([200, 200, 200, 200, 200]);
    const given = answers.map((res) => res.body.secret as string);
    expect(new Set(given).size).toBe(5);
    const stored = await rawWebhook(webhook.id);
    const secrets = testSecrets();
    const current = secrets.open({ id: webhook.id, secret: stored!.secret });
    const [, previous] = secrets.signingSecrets(
      {
        id: webhook.id,
        secret: stored!.secret,
        previousSecret: stored!.previousSecret,
        previousSecretExpiresAt: stored!.previousSecretExpiresAt,
      },
      new Date(),
    );
    // Five writes in a chain: the first secret, then each answer replacing the one before.
    expect(given).toContain(current);
    expect(given).toContain(previous);
    expect(previous).not.toBe(current);
  });
});
