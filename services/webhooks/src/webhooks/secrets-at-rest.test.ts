import { Types } from 'mongoose';
import { waitFor } from '@platform/shared/testing';
import { generateWebhookSecret } from '../deliveries/signature';
import type { Receiver } from '../test/receiver';
import { testSecrets } from '../test/secrets';
import { verifyStandardWebhook } from '../test/signatures';
import {
  apiClient,
  settledDelivery,
  subscribe,
  testEncryptionKey,
  useTestBed,
  type TestProject,
  type TestService,
} from '../test/test-service';

// Real MongoDB, Kafka and receivers on 127.0.0.1. The service seals with TEST_ENCRYPTION_KEY
// (key id "test") unless a test says otherwise; records of earlier versions and of other keys
// are written with the driver, as they would be found in the database.
const bed = useTestBed();

const OLD_KEY = testEncryptionKey('old', 1);
const NEW_KEY = testEncryptionKey('new', 2);
const UNKNOWN_KEY = testEncryptionKey('gone', 3);

/** Every document of every collection of the service's database, as the driver reads it. */
async function rawDatabase(service: TestService): Promise<string> {
  const db = service.connection.db!;
  const collections = await db.listCollections().toArray();
  const dumps = await Promise.all(
    collections.map(async ({ name }) => ({
      name,
      docs: await db.collection(name).find().toArray(),
    })),
  );
  return JSON.stringify(dumps);
}

/** The raw webhook document, read with the driver. */
const rawWebhook = (service: TestService, id: string) =>
  service.models.webhooks.collection.findOne({ _id: new Types.ObjectId(id) });

/**
 * A webhook of `p` written with the driver as an earlier version or another key left it:
 * `secret` is stored as given (sealed for `id`, when it is sealed).
 */
async function storeWebhook(
  service: TestService,
  p: TestProject,
  url: string,
  secret: string,
  id = new Types.ObjectId().toHexString(),
) {
  await service.models.webhooks.collection.insertOne({
    _id: new Types.ObjectId(id),
    projectId: p.projectId,
    accountId: p.accountId,
    url,
    events: ['deployment.status_changed'],
    enabled: true,
    secret,
    disabledReason: null,
    failingSince: null,
    createdAt: new Date(),
    updatedAt: new Date(),
  });
  return id;
}

/** `p` as seen through another instance of the service (one started after a restart). */
const through = (service: TestService, p: TestProject): TestProject => ({
  ...p,
  api: apiClient(service.url, p.accountId),
});

/** Sends the webhook a test event and returns what its receiver got. */
async function testEvent(p: TestProject, webhookId: string, target: Receiver) {
  const before = target.requests.length;
  const res = await p.api.post(`${p.base}/${webhookId}/test`);
  expect(res.status).toBe(202);
  return (await target.waitForRequests(before + 1))[before]!;
}

describe('webhook secrets at rest', () => {
  it('keeps no secret in clear in any document, after creating, rotating and delivering', async () => {
    const service = await bed.start({ dbName: bed.newDatabase('webhooks_at_rest') });
    const p = bed.project(service);
    const target = await bed.receiver();
    const created = await subscribe(p, `${target.url}/hook`);
    const rotated = await p.api.patch(`${p.base}/${created.id}`, { rotateSecret: true });
    expect(rotated.status).toBe(200);
    const request = await testEvent(p, created.id, target);
    await settledDelivery(service, { webhookId: created.id }, 'succeeded');

    expect(verifyStandardWebhook(rotated.body.secret, request)).toBe(true);
    expect(verifyStandardWebhook(created.secret, request)).toBe(true);
    const everything = await rawDatabase(service);
    expect(everything).toContain(created.id);
    expect(everything).not.toContain('whsec_');
    for (const secret of [created.secret, rotated.body.secret as string]) {
      const key = secret.slice('whsec_'.length);
      expect(everything).not.toContain(key);
      expect(everything).not.toContain(Buffer.from(key, 'base64').toString('hex'));
    }
    const stored = await rawWebhook(service, created.id);
    expect(stored?.secret).toMatch(/^v1:test:/);
    expect(stored?.previousSecret).toMatch(/^v1:test:/);
  });

  it('signs with a secret an earlier version stored in clear, and seals it at the next start', async () => {
    const dbName = bed.newDatabase('webhooks_at_rest');
    let service = await bed.start({ dbName });
    const p = bed.project(service);
    const target = await bed.receiver();
    const secret = generateWebhookSecret();
    const id = await storeWebhook(service, p, `${target.url}/hook`, secret);

    expect(verifyStandardWebhook(secret, await testEvent(p, id, target))).toBe(true);

    await bed.stop(service);
    service = await bed.start({ dbName });
    const sealed = await waitFor(
      async () => {
        const stored = await rawWebhook(service, id);
        return stored?.secret.startsWith('v1:') ? (stored.secret as string) : null;
      },
      { what: 'the clear secret sealed' },
    );
    expect(sealed).toMatch(/^v1:test:/);
    expect(testSecrets().open({ id, secret: sealed })).toBe(secret);
    expect(await rawDatabase(service)).not.toContain(secret.slice('whsec_'.length));
    expect(verifyStandardWebhook(secret, await testEvent(through(service, p), id, target))).toBe(
      true,
    );
  });

  it('signs with a secret sealed under a previous key, and seals it under the current key at the next start', async () => {
    const dbName = bed.newDatabase('webhooks_at_rest');
    const keys = { encryptionKey: NEW_KEY, previousEncryptionKeys: [OLD_KEY] };
    let service = await bed.start({ dbName, ...keys });
    const p = bed.project(service);
    const target = await bed.receiver();
    const secret = generateWebhookSecret();
    const id = new Types.ObjectId().toHexString();
    const underOldKey = testSecrets(OLD_KEY).seal(id, secret);
    await storeWebhook(service, p, `${target.url}/hook`, underOldKey, id);

    expect(verifyStandardWebhook(secret, await testEvent(p, id, target))).toBe(true);

    await bed.stop(service);
    service = await bed.start({ dbName, ...keys });
    const resealed = await waitFor(
      async () => {
        const stored = await rawWebhook(service, id);
        return stored?.secret.startsWith('v1:new:') ? (stored.secret as string) : null;
      },
      { what: 'the secret sealed under the new key' },
    );
    expect(testSecrets(NEW_KEY).open({ id, secret: resealed })).toBe(secret);
    expect(() => testSecrets(OLD_KEY).open({ id, secret: resealed })).toThrow(/cannot be opened/);
    expect(verifyStandardWebhook(secret, await testEvent(through(service, p), id, target))).toBe(
      true,
    );
  });

  it('does not open a sealed secret copied onto another webhook', () => {
    const secrets = testSecrets();
    const id = new Types.ObjectId().toHexString();
    const other = new Types.ObjectId().toHexString();
    const sealed = secrets.seal(id, generateWebhookSecret());

    expect(() => secrets.open({ id: other, secret: sealed })).toThrow(/cannot be opened/);
    expect(() =>
      secrets.signingSecrets(
        {
          id,
          secret: secrets.seal(id, generateWebhookSecret()),
          previousSecret: sealed,
          previousSecretExpiresAt: new Date(Date.now() + 60_000),
        },
        new Date(),
      ),
    ).toThrow(/cannot be opened/);
  });

  it('fails loudly on a secret under a key it does not have: the attempt says why, nothing is sent, the record is left as it is until its owner rotates it', async () => {
    const dbName = bed.newDatabase('webhooks_at_rest');
    let service = await bed.start({ dbName, encryptionKey: NEW_KEY });
    const p = bed.project(service);
    const target = await bed.receiver();
    const id = new Types.ObjectId().toHexString();
    const underUnknownKey = testSecrets(UNKNOWN_KEY).seal(id, generateWebhookSecret());
    await storeWebhook(service, p, `${target.url}/hook`, underUnknownKey, id);

    const res = await p.api.post(`${p.base}/${id}/test`);
    expect(res.status).toBe(202);
    const delivery = await waitFor(
      async () => {
        const found = await service.models.deliveries.findOne({ webhookId: id }).lean();
        return found && found.attemptCount > 0 ? found : null;
      },
      { what: 'the attempt recorded' },
    );

    expect(delivery.attempts[0]).toMatchObject({
      statusCode: null,
      error: expect.stringMatching(
        /signing secret of 1 webhook\(s\) \([0-9a-f]{24}\) cannot be opened with ENCRYPTION_KEY/,
      ),
    });
    expect(target.connections).toBe(0);
    // Not the receiver's fault: the webhook is not counted as failing.
    expect((await rawWebhook(service, id))?.failingSince).toBeNull();

    // At the next start the housekeeping seals a clear secret beside it (so it has run), and
    // leaves this one as it was: nothing is sealed over a secret it cannot open.
    const clearId = await storeWebhook(service, p, `${target.url}/other`, generateWebhookSecret());
    await bed.stop(service);
    service = await bed.start({ dbName, encryptionKey: NEW_KEY });
    await waitFor(async () => (await rawWebhook(service, clearId))?.secret.startsWith('v1:new:'), {
      what: 'the clear secret sealed',
    });
    expect((await rawWebhook(service, id))?.secret).toBe(underUnknownKey);

    // Its owner recovers by rotating: a new secret, with no previous one to sign beside it.
    const owner = through(service, p);
    const rotated = await owner.api.patch(`${owner.base}/${id}`, { rotateSecret: true });
    expect(rotated.status).toBe(200);
    expect((await rawWebhook(service, id))?.previousSecret).toBeNull();
    const request = await testEvent(owner, id, target);
    expect(verifyStandardWebhook(rotated.body.secret, request)).toBe(true);
    expect(String(request.headers['webhook-signature']).split(' ')).toHaveLength(1);
  });

  it('refuses to start with a malformed ENCRYPTION_KEY, naming it', async () => {
    await expect(
      bed.start({ dbName: bed.newDatabase('webhooks_at_rest'), encryptionKey: 'k1:c2hvcnQ=' }),
    ).rejects.toThrow(/ENCRYPTION_KEY/);
  });
});
