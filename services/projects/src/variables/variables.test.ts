// The variables API (contracts.md, Variables) through HTTP against the real database: every rule,
// the quota under racing requests, and secrets that never leave sealed.
import { Types } from 'mongoose';
import { pino } from 'pino';
import { createSecretBox, variableSecretContext } from '@platform/shared';
import { errorBody, uniqueName, useRunning, waitFor } from '@platform/shared/testing';
import {
  apiClient,
  buildAccountService,
  buildProject,
  buildService,
  type ApiClient,
} from '../test/api-client';
import { startTestApp, TEST_ENCRYPTION_KEY } from '../test/test-app';
import { VARIABLES_PER_SERVICE } from './variables.service';

const app = useRunning(() => startTestApp());
let client: ApiClient;
let projectId: string;
let serviceId: string;
let base: string;

beforeEach(async () => {
  ({ client, projectId, serviceId } = await buildAccountService(app().url));
  base = `/api/projects/${projectId}/services/${serviceId}/variables`;
});

const put = (name: string, body: unknown) => client.put(`${base}/${name}`, body);
const list = async () => (await client.get(base)).body.variables as Record<string, unknown>[];
const stored = (name: string) =>
  app()
    .models.variables.findOne({ serviceId: new Types.ObjectId(serviceId), name })
    .lean();
const slotsTaken = async () =>
  (await app().models.services.findById(serviceId).lean())?.variableCount ?? 0;
const invalidAt = (path: string) => ({
  ...errorBody('VALIDATION_ERROR'),
  details: [{ path, message: expect.any(String) }],
});
const ISO_DATE = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

describe('PUT …/variables/:name', () => {
  it('returns 201 with the variable when it is new, 200 when it replaces one', async () => {
    const created = await put('DATABASE_URL', { value: 'postgres://db/shop' });
    const replaced = await put('DATABASE_URL', { value: 'postgres://db/shop2' });

    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      name: 'DATABASE_URL',
      value: 'postgres://db/shop',
      secret: false,
      updatedAt: ISO_DATE,
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ value: 'postgres://db/shop2', secret: false });
    expect(await list()).toEqual([replaced.body]);
    expect(await stored('DATABASE_URL')).toMatchObject({
      accountId: client.accountId,
      projectId: new Types.ObjectId(projectId),
      value: 'postgres://db/shop2',
      sealed: null,
    });
  });

  it('takes an empty value, one of exactly 32 KiB, and the longest name', async () => {
    expect((await put('EMPTY', { value: '' })).status).toBe(201);
    expect((await put('BIG', { value: 'x'.repeat(32 * 1024) })).status).toBe(201);
    expect((await put(`A${'_'.repeat(127)}`, { value: '1' })).status).toBe(201);
    expect((await put('_LEADING_UNDERSCORE', { value: '1' })).status).toBe(201);
  });

  it.each([
    ['lower-case', 'database_url'],
    ['starting with a digit', '1ST'],
    ['with a dash', 'MY-VAR'],
    ['longer than 128 characters', `A${'B'.repeat(128)}`],
    ['PORT, reserved', 'PORT'],
    ['PLATFORM_*, reserved', 'PLATFORM_SERVICE_ID'],
    ['PLATFORM_ alone, reserved', 'PLATFORM_'],
  ])('returns 400 VALIDATION_ERROR for a name %s', async (_case, name) => {
    const response = await put(name, { value: 'x' });

    expect(response.status).toBe(400);
    expect(response.body).toEqual(invalidAt('name'));
    expect(await app().models.variables.countDocuments({ serviceId })).toBe(0);
  });

  it.each<[string, unknown, string]>([
    ['the value is over 32 KiB', { value: 'x'.repeat(32 * 1024 + 1) }, 'value'],
    ['the value is over 32 KiB in UTF-8 bytes', { value: 'é'.repeat(16 * 1024 + 1) }, 'value'],
    ['the value is missing', { secret: true }, 'value'],
    ['the value is not a string', { value: 42 }, 'value'],
    ['secret is not a boolean', { value: 'x', secret: 'yes' }, 'secret'],
    ['a field is unknown', { value: 'x', name: 'OTHER' }, 'name'],
  ])('returns 400 VALIDATION_ERROR when %s', async (_case, body, path) => {
    const response = await put('VALID_NAME', body);

    expect(response.status).toBe(400);
    expect(response.body).toEqual(invalidAt(path));
    expect(await app().models.variables.countDocuments({ serviceId })).toBe(0);
  });

  it(`refuses the ${VARIABLES_PER_SERVICE + 1}st variable with 409, still replaces and frees slots`, async () => {
    for (let i = 0; i < VARIABLES_PER_SERVICE; i += 1) {
      expect((await put(`VAR_${i}`, { value: String(i) })).status).toBe(201);
    }

    const refused = await put('ONE_TOO_MANY', { value: 'x' });
    const replaced = await put('VAR_7', { value: 'seven' });
    const deleted = await client.delete(`${base}/VAR_0`);
    const afterDelete = await put('ONE_TOO_MANY', { value: 'x' });

    expect(refused.status).toBe(409);
    expect(refused.body).toEqual(
      errorBody('CONFLICT', 'A service can have at most 200 variables: delete one to add another.'),
    );
    expect([replaced.status, deleted.status, afterDelete.status]).toEqual([200, 204, 201]);
    expect(await app().models.variables.countDocuments({ serviceId })).toBe(VARIABLES_PER_SERVICE);
    expect(await slotsTaken()).toBe(VARIABLES_PER_SERVICE);
  });

  it('lets exactly one of many racing new variables take the last slot', async () => {
    for (let i = 0; i < VARIABLES_PER_SERVICE - 1; i += 1) {
      await app().models.variables.create({
        accountId: client.accountId,
        projectId: new Types.ObjectId(projectId),
        serviceId: new Types.ObjectId(serviceId),
        name: `PRESET_${i}`,
        secret: false,
        value: '1',
        createdAt: new Date(),
        updatedAt: new Date(),
      });
    }
    await app().models.services.updateOne(
      { _id: serviceId },
      { $set: { variableCount: VARIABLES_PER_SERVICE - 1 } },
    );

    const racers = Array.from({ length: 12 }, (_, i) => put(`RACER_${i}`, { value: 'x' }));
    const statuses = (await Promise.all(racers)).map((r) => r.status).sort();

    expect(statuses).toEqual([201, ...Array<number>(11).fill(409)]);
    expect(await app().models.variables.countDocuments({ serviceId })).toBe(VARIABLES_PER_SERVICE);
    expect(await slotsTaken()).toBe(VARIABLES_PER_SERVICE);
  });

  it('creates one variable and takes one slot when racing PUTs create the same name', async () => {
    const racers = Array.from({ length: 10 }, (_, i) => put('SAME', { value: String(i) }));
    const statuses = (await Promise.all(racers)).map((r) => r.status).sort();

    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 201]);
    expect(await app().models.variables.countDocuments({ serviceId })).toBe(1);
    expect(await slotsTaken()).toBe(1);
  });
});

describe('secret variables', () => {
  const SECRET = `s3cr3t-${uniqueName('value')}`;

  it('are answered without their value, on PUT and in the list', async () => {
    const created = await put('API_TOKEN', { value: SECRET, secret: true });
    const listed = await client.get(base);

    expect(created.status).toBe(201);
    expect(created.body).toEqual({ name: 'API_TOKEN', secret: true, updatedAt: ISO_DATE });
    expect(listed.body).toEqual({ variables: [created.body] });
    expect(JSON.stringify([created.body, listed.body])).not.toContain(SECRET);
  });

  it('are stored sealed, bound to their service and name: no plaintext in the document', async () => {
    await put('API_TOKEN', { value: SECRET, secret: true });

    const doc = await stored('API_TOKEN');

    expect(JSON.stringify(doc)).not.toContain(SECRET);
    expect(JSON.stringify(doc)).not.toContain(Buffer.from(SECRET).toString('base64'));
    expect(doc).toMatchObject({
      secret: true,
      value: null,
      sealed: expect.stringMatching(/^v1:test:/),
    });
    const box = app().secretBox;
    expect(box.open(doc!.sealed!, variableSecretContext(serviceId, 'API_TOKEN'))).toBe(SECRET);
    expect(() => box.open(doc!.sealed!, variableSecretContext(serviceId, 'OTHER'))).toThrow();
  });

  it('stay secret when replaced without saying, and turn plain only when told', async () => {
    await put('API_TOKEN', { value: SECRET, secret: true });

    const kept = await put('API_TOKEN', { value: `${SECRET}-2` });
    const keptDoc = await stored('API_TOKEN');
    const plain = await put('API_TOKEN', { value: 'public now', secret: false });

    expect(kept.status).toBe(200);
    expect(kept.body).toEqual({ name: 'API_TOKEN', secret: true, updatedAt: ISO_DATE });
    expect(JSON.stringify(keptDoc)).not.toContain(SECRET);
    expect(plain.body).toMatchObject({ value: 'public now', secret: false });
    expect(await stored('API_TOKEN')).toMatchObject({ value: 'public now', sealed: null });
  });

  it('turn a plain variable secret, leaving no plaintext behind', async () => {
    await put('API_TOKEN', { value: SECRET });

    const response = await put('API_TOKEN', { value: SECRET, secret: true });

    expect(response.body).toEqual({ name: 'API_TOKEN', secret: true, updatedAt: ISO_DATE });
    expect(JSON.stringify(await stored('API_TOKEN'))).not.toContain(SECRET);
  });
});

describe('GET …/variables', () => {
  it('lists them sorted by name', async () => {
    for (const name of ['ZETA', '_PRIVATE', 'ALPHA', 'MIDDLE', 'ALPHA_2']) {
      await put(name, { value: name.toLowerCase() });
    }

    const names = (await list()).map((v) => v.name);

    expect(names).toEqual(['ALPHA', 'ALPHA_2', 'MIDDLE', 'ZETA', '_PRIVATE']);
  });

  it('answers an empty list for a service without variables', async () => {
    expect((await client.get(base)).body).toEqual({ variables: [] });
  });
});

describe('DELETE …/variables/:name', () => {
  it('returns 204, then 404 NOT_FOUND for the same name', async () => {
    await put('GONE', { value: 'x' });

    const first = await client.delete(`${base}/GONE`);
    const second = await client.delete(`${base}/GONE`);

    expect(first.status).toBe(204);
    expect(first.body).toBeNull();
    expect(second.status).toBe(404);
    expect(second.body).toEqual(errorBody('NOT_FOUND', 'Variable not found.'));
    expect(await list()).toEqual([]);
    expect(await slotsTaken()).toBe(0);
  });
});

describe("another account's, a missing or a deleted service", () => {
  it('has no variables to read, write or delete: 404 on every route', async () => {
    await put('MINE', { value: 'x' });
    const stranger = apiClient(app().url, uniqueName('stranger'));
    const deleted = await buildService(client, projectId);
    await client.delete(`/api/projects/${projectId}/services/${deleted.id}`);
    const paths = [
      base,
      `/api/projects/${projectId}/services/${new Types.ObjectId().toHexString()}/variables`,
      `/api/projects/${projectId}/services/${deleted.id}/variables`,
      `/api/projects/${projectId}/services/not-an-id/variables`,
    ];

    for (const [who, path] of [
      [stranger, paths[0]!],
      [client, paths[1]!],
      [client, paths[2]!],
      [client, paths[3]!],
    ] as const) {
      const answers = [
        await who.get(path),
        await who.put(`${path}/MINE`, { value: 'hijacked' }),
        await who.delete(`${path}/MINE`),
      ];
      expect(answers.map((a) => [a.status, a.body.error])).toEqual([
        [404, 'NOT_FOUND'],
        [404, 'NOT_FOUND'],
        [404, 'NOT_FOUND'],
      ]);
    }
    expect(await stored('MINE')).toMatchObject({ value: 'x' });
  });
});

describe('the variables of a deleted service or project', () => {
  const CASCADE = { timeoutMs: 15_000, what: 'the cascade to remove the variables' };

  it('are removed with their service', async () => {
    await put('A', { value: '1' });
    await put('B', { value: '2', secret: true });

    await client.delete(`/api/projects/${projectId}/services/${serviceId}`);

    await waitFor(
      async () => (await app().models.variables.countDocuments({ serviceId })) === 0,
      CASCADE,
    );
  });

  it('are removed with their project', async () => {
    await put('A', { value: '1' });

    await client.delete(`/api/projects/${projectId}`);

    await waitFor(
      async () => (await app().models.variables.countDocuments({ projectId })) === 0,
      CASCADE,
    );
  });
});

describe('the logs of requests that carry a secret', () => {
  const lines: string[] = [];
  const logged = useRunning(() =>
    startTestApp(
      {},
      { logger: pino({ level: 'trace' }, { write: (line: string) => lines.push(line) }) },
    ),
  );

  it('never hold its value, whether the request succeeds or is refused', async () => {
    const secret = `never-logged-${uniqueName('v')}`;
    const owner = apiClient(logged().url);
    const project = await buildProject(owner);
    const service = await buildService(owner, project.id);
    const path = `/api/projects/${project.id}/services/${service.id}`;

    const answers = [
      await owner.put(`${path}/variables/TOKEN`, { value: secret, secret: true }),
      await owner.put(`${path}/variables/TOKEN`, { value: secret }),
      await owner.put(`${path}/variables/TOKEN`, { value: `${secret}${'x'.repeat(40_000)}` }),
      await owner.put(`${path}/variables/TOKEN`, { value: secret, unknown: secret }),
      await owner.get(`${path}/variables`),
      await owner.get(`/internal/projects/${project.id}/services/${service.id}/source`),
    ];

    expect(answers.map((a) => a.status)).toEqual([201, 200, 400, 400, 200, 200]);
    expect(lines.length).toBeGreaterThan(answers.length);
    expect(lines.filter((line) => line.includes(secret))).toEqual([]);
  });
});

describe('a new ENCRYPTION_KEY', () => {
  const NEW_KEY = `new:${Buffer.alloc(32, 9).toString('base64')}`;

  it('has every secret variable sealed anew under it, so the old key can be retired', async () => {
    await put('API_TOKEN', { value: 'tok-rotate-1', secret: true });
    await put('PLAIN', { value: 'not a secret' });
    const before = await stored('API_TOKEN');
    expect(before!.sealed).toMatch(/^v1:test:/);

    // Another replica on the same database, started with the new key and the old one as previous.
    const rotated = await startTestApp(
      {
        MONGO_DB: app().config.MONGO_DB,
        ENCRYPTION_KEY: NEW_KEY,
        ENCRYPTION_PREVIOUS_KEYS: TEST_ENCRYPTION_KEY,
        RESEAL_INTERVAL: '100ms',
      },
      { shared: true },
    );
    try {
      const after = await waitFor(
        async () => {
          const doc = await stored('API_TOKEN');
          return doc?.sealed?.startsWith('v1:new:') ? doc : null;
        },
        { what: 'the secret sealed under the new key' },
      );
      const context = variableSecretContext(serviceId, 'API_TOKEN');
      expect(createSecretBox({ ENCRYPTION_KEY: NEW_KEY }).open(after.sealed!, context)).toBe(
        'tok-rotate-1',
      );
      expect(after.updatedAt).toEqual(before!.updatedAt);
      expect((await stored('PLAIN'))!.value).toBe('not a secret');
      // What the pipeline is handed opens with the new key alone.
      const source = await apiClient(rotated.url, client.accountId).get(
        `/internal/projects/${projectId}/services/${serviceId}/source`,
      );
      const sealed = source.body.variables.find((v: { name: string }) => v.name === 'API_TOKEN');
      expect(createSecretBox({ ENCRYPTION_KEY: NEW_KEY }).open(sealed.sealed, context)).toBe(
        'tok-rotate-1',
      );
    } finally {
      await rotated.close();
    }
  });
});
