// SOURCE_ALLOW_LOCAL when a service is saved: `true` allows local repositories but never the
// platform's own files; a directory allows file:// repositories under it only. Real paths: a
// symlink is followed to where it leads. (The deployments service checks again when fetching.)
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { platformCheckout } from '@platform/shared';
import { errorBody, useRunning } from '@platform/shared/testing';
import { apiClient, buildProject, buildService } from '../test/api-client';
import { startTestApp } from '../test/test-app';

const scratch = mkdtempSync(path.join(tmpdir(), 'projects-local-sources-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const cache = path.join(scratch, 'cache');
const allowed = path.join(scratch, 'allowed');
const outside = path.join(scratch, 'outside');
for (const dir of [cache, allowed, outside]) mkdirSync(dir);
symlinkSync(platformCheckout(), path.join(scratch, 'platform-link'));
symlinkSync(outside, path.join(allowed, 'link-out'));

const anywhere = useRunning(() =>
  startTestApp({ SOURCE_ALLOW_LOCAL: 'true', XDG_CACHE_HOME: cache }),
);
const underDirectory = useRunning(() => startTestApp({ SOURCE_ALLOW_LOCAL: allowed }));

const fileUrl = (dir: string) => pathToFileURL(dir).href;

/** Creates a service with `repository`, and PATCHes another one to it: both answers. */
async function saveBoth(url: string, repository: string) {
  const client = apiClient(url);
  const project = await buildProject(client);
  const path = `/api/projects/${project.id}/services`;
  const service = await buildService(client, project.id);
  const created = await client.post(path, { name: 'web', repository });
  const patched = await client.patch(`${path}/${service.id}`, { repository });
  return { created, patched };
}

const refused = (message: RegExp) => ({
  ...errorBody('VALIDATION_ERROR'),
  details: [{ path: 'repository', message: expect.stringMatching(message) }],
});

describe('SOURCE_ALLOW_LOCAL=true', () => {
  it.each([
    ['the checkout the platform runs from', () => fileUrl(platformCheckout())],
    ['a file inside that checkout', () => fileUrl(path.join(platformCheckout(), '.git'))],
    ['a symlink elsewhere that leads into it', () => fileUrl(path.join(scratch, 'platform-link'))],
    [
      'platform-dev in the cache (secrets, builds, runtime state)',
      () => fileUrl(path.join(cache, 'platform-dev', 'builds', 'x.git')),
    ],
  ])('refuses %s: 400 VALIDATION_ERROR', async (_case, repository) => {
    const { created, patched } = await saveBoth(anywhere().url, repository());

    expect([created.status, patched.status]).toEqual([400, 400]);
    expect(created.body).toEqual(refused(/platform's own files/));
    expect(patched.body).toEqual(refused(/platform's own files/));
  });

  it('takes a local repository anywhere else', async () => {
    const repository = fileUrl(path.join(outside, 'app.git'));

    const { created, patched } = await saveBoth(anywhere().url, repository);

    expect([created.status, patched.status]).toEqual([201, 200]);
    expect(created.body.repository).toBe(repository);
  });
});

describe('SOURCE_ALLOW_LOCAL=<directory>', () => {
  it('takes a file:// repository under it', async () => {
    const repository = fileUrl(path.join(allowed, 'team', 'app.git'));

    const { created, patched } = await saveBoth(underDirectory().url, repository);

    expect([created.status, patched.status]).toEqual([201, 200]);
    expect(patched.body.repository).toBe(repository);
  });

  it.each([
    ['a file:// repository outside it', fileUrl(path.join(outside, 'app.git')), /must be under/],
    [
      'a symlink in it that leads outside',
      fileUrl(path.join(allowed, 'link-out', 'app.git')),
      /must be under/,
    ],
    ['http://', 'http://93.184.215.14/app.git', /https:\/\//],
    ['a host on loopback', 'https://127.0.0.1/app.git', /public host/],
  ])('refuses %s: 400 VALIDATION_ERROR', async (_case, repository, message) => {
    const { created, patched } = await saveBoth(underDirectory().url, repository);

    expect([created.status, patched.status]).toEqual([400, 400]);
    expect(created.body).toEqual(refused(message));
    expect(patched.body).toEqual(refused(message));
  });
});
