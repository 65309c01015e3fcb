import { useRunning } from '@platform/shared/testing';
import { apiClient, buildProject } from '../test/api-client';
import { readAllPages, type ListItem as Item } from '../test/pages';
import { startTestApp } from '../test/test-app';

const app = useRunning(startTestApp);
const PROJECTS = { path: '/api/projects', key: 'projects' };

/** Newest first: createdAt descending, then id descending (ObjectIds compare as hex strings). */
const byNewestFirst = (a: Item, b: Item) =>
  b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id);

describe('paging through GET /api/projects', () => {
  it('walks 250 projects with limit=7 newest first, with no duplicate and no gap', async () => {
    const client = apiClient(app().url);
    const created: Item[] = [];
    // Ten at a time: many share a millisecond, so the id tie-break is exercised too.
    for (let batch = 0; batch < 25; batch++) {
      const made = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          buildProject(client, { name: `project ${batch * 10 + i}` }),
        ),
      );
      created.push(...made.map(({ id, name, createdAt }) => ({ id, name, createdAt })));
    }
    await buildProject(apiClient(app().url), { name: 'someone else' });

    const pages = await readAllPages(client, PROJECTS, 7);

    expect(pages).toHaveLength(36);
    expect(pages.slice(0, -1).every((page) => page.length === 7)).toBe(true);
    expect(pages.at(-1)).toHaveLength(250 - 35 * 7);
    const walked = pages.flat();
    expect(new Set(walked.map((p) => p.id)).size).toBe(250);
    expect(walked).toEqual([...created].sort(byNewestFirst));

    const unpaged = await client.get('/api/projects');
    expect(unpaged.body.projects).toEqual(walked);
    expect(unpaged.body.nextCursor).toBeUndefined();
  });

  it('orders projects created in the same millisecond by id, across page boundaries', async () => {
    const client = apiClient(app().url);
    const createdAt = new Date();
    const docs = await app().models.projects.insertMany(
      Array.from({ length: 30 }, (_, i) => ({
        accountId: client.accountId,
        name: `tied ${i}`,
        nameKey: `tied ${i}`,
        createdAt,
      })),
    );
    const expected = docs.map((d) => d._id.toHexString()).sort((a, b) => b.localeCompare(a));

    const walked = (await readAllPages(client, PROJECTS, 4)).flat().map((p) => p.id);

    expect(walked).toEqual(expected);
  });

  it('neither repeats nor skips live projects when one is deleted between pages', async () => {
    const client = apiClient(app().url);
    const created: Item[] = [];
    for (let i = 0; i < 12; i++) created.push(await buildProject(client, { name: `p${i}` }));
    const newestFirst = [...created].sort(byNewestFirst);
    const doomed = newestFirst[8]!;

    const pages = await readAllPages(client, PROJECTS, 5, async (page) => {
      if (page === 1) expect((await client.delete(`/api/projects/${doomed.id}`)).status).toBe(204);
    });

    expect(pages.flat().map((p) => p.id)).toEqual(
      newestFirst.filter((p) => p !== doomed).map((p) => p.id),
    );
  });

  it('accepts a cursor on its own and returns everything after it', async () => {
    const client = apiClient(app().url);
    const created: Item[] = [];
    for (let i = 0; i < 4; i++) created.push(await buildProject(client));
    const first = await client.get('/api/projects?limit=1');

    const rest = await client.get(
      `/api/projects?cursor=${encodeURIComponent(first.body.nextCursor)}`,
    );

    expect(rest.status).toBe(200);
    expect(rest.body.projects.map((p: Item) => p.id)).toEqual(
      [...created]
        .sort(byNewestFirst)
        .slice(1)
        .map((p) => p.id),
    );
    expect(rest.body.nextCursor).toBeUndefined();
    expect(first.body.projects[0].id).toBe([...created].sort(byNewestFirst)[0]!.id);
  });
});
