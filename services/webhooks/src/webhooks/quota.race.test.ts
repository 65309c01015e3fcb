import { Types } from 'mongoose';
import { useTestBed, type TestProject, type TestService } from '../test/test-service';
import { MAX_WEBHOOKS_PER_PROJECT } from './webhooks.service';

// Real MongoDB; no worker, and the URLs are IP literals, so nothing is dialled or resolved.
const bed = useTestBed();
let service: TestService;

beforeAll(async () => {
  service = await bed.start({ dbName: bed.newDatabase('webhooks_quota'), worker: false });
});

const URL_BASE = 'http://127.0.0.1:9/hook';

/** `count` creates of `p` sent at once; their statuses, sorted. */
async function raceCreates(p: TestProject, count: number): Promise<number[]> {
  const answers = await Promise.all(
    Array.from({ length: count }, (_, i) => p.api.post(p.base, { url: `${URL_BASE}/${i}` })),
  );
  for (const res of answers.filter((r) => r.status === 409)) {
    expect(res.body).toEqual({
      error: 'CONFLICT',
      message: `A project can have at most ${MAX_WEBHOOKS_PER_PROJECT} webhooks.`,
    });
  }
  return answers.map((res) => res.status).sort();
}

const stored = (p: TestProject) =>
  service.models.webhooks.countDocuments({ projectId: p.projectId });
const counted = async (p: TestProject) =>
  (await service.models.webhookQuotas.findById(p.projectId).lean())?.webhooks;

const statuses = (created: number, refused: number) => [
  ...Array<number>(created).fill(201),
  ...Array<number>(refused).fill(409),
];

describe(`the quota of ${MAX_WEBHOOKS_PER_PROJECT} webhooks a project, raced`, () => {
  it('lets exactly 20 of 40 racing creates on an empty project through', async () => {
    const p = bed.project(service);

    const answers = await raceCreates(p, 40);

    expect(answers).toEqual(statuses(MAX_WEBHOOKS_PER_PROJECT, 40 - MAX_WEBHOOKS_PER_PROJECT));
    expect(await stored(p)).toBe(MAX_WEBHOOKS_PER_PROJECT);
    expect(await counted(p)).toBe(MAX_WEBHOOKS_PER_PROJECT);
  });

  it('gives a deleted webhook’s place back: 5 deleted, 5 of 12 racing creates pass', async () => {
    const p = bed.project(service);
    // As many racing creates as there are places, on a project without a count yet: all pass.
    expect(await raceCreates(p, MAX_WEBHOOKS_PER_PROJECT)).toEqual(
      statuses(MAX_WEBHOOKS_PER_PROJECT, 0),
    );
    const { body } = await p.api.get(p.base);
    const ids = (body.webhooks as { id: string }[]).slice(0, 5).map((w) => w.id);
    await Promise.all(
      ids.map(async (id) => expect((await p.api.delete(`${p.base}/${id}`)).status).toBe(204)),
    );
    expect(await counted(p)).toBe(MAX_WEBHOOKS_PER_PROJECT - 5);

    const answers = await raceCreates(p, 12);

    expect(answers).toEqual(statuses(5, 7));
    expect(await stored(p)).toBe(MAX_WEBHOOKS_PER_PROJECT);
  });

  it('counts the webhooks a project had before counts existed, under a race too', async () => {
    const p = bed.project(service);
    const now = new Date();
    await service.models.webhooks.collection.insertMany(
      Array.from({ length: MAX_WEBHOOKS_PER_PROJECT - 2 }, (_, i) => ({
        _id: new Types.ObjectId(),
        projectId: p.projectId,
        accountId: p.accountId,
        url: `${URL_BASE}/old-${i}`,
        events: ['deployment.status_changed'],
        enabled: true,
        secret: `whsec_${Buffer.alloc(32, i).toString('base64')}`,
        disabledReason: null,
        failingSince: null,
        createdAt: now,
        updatedAt: now,
      })),
    );
    expect(await counted(p)).toBeUndefined();

    const answers = await raceCreates(p, 10);

    expect(answers).toEqual(statuses(2, 8));
    expect(await stored(p)).toBe(MAX_WEBHOOKS_PER_PROJECT);
    expect(await counted(p)).toBe(MAX_WEBHOOKS_PER_PROJECT);
  });

  it('keeps each project’s quota to itself', async () => {
    const p = bed.project(service);
    const other = bed.project(service);

    const [mine, theirs] = await Promise.all([raceCreates(p, 25), raceCreates(other, 3)]);

    expect(mine).toEqual(statuses(MAX_WEBHOOKS_PER_PROJECT, 5));
    expect(theirs).toEqual(statuses(3, 0));
  });
});
