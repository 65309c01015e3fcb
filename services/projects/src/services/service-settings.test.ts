// A service's settings (contracts.md, "Services: where the code comes from and how it runs"):
// defaults, every rule of the table, null clears, `url` read-only, SOURCE_ALLOW_LOCAL.
import { errorBody, useRunning } from '@platform/shared/testing';
import { apiClient, buildProject, buildService, type ApiClient } from '../test/api-client';
import { ANSWERED_DEFAULTS, SAMPLE_SETTINGS } from '../test/settings';
import { startTestApp } from '../test/test-app';

const app = useRunning(() => startTestApp());
const localApp = useRunning(() => startTestApp({ SOURCE_ALLOW_LOCAL: 'true' }));

const DEFAULTS = { ...ANSWERED_DEFAULTS, url: null };
const SETTINGS = SAMPLE_SETTINGS;

async function servicesOf(url: string) {
  const client = apiClient(url);
  const project = await buildProject(client);
  const path = `/api/projects/${project.id}/services`;
  return { client, projectId: project.id, path, one: (id: string) => `${path}/${id}` };
}

const invalid = (path: string) => ({
  ...errorBody('VALIDATION_ERROR'),
  details: [{ path, message: expect.any(String) }],
});

/** Repositories refused (each sentence follows "the repository"), on create and on PATCH. */
const REFUSED_REPOSITORIES: [string, string][] = [
  ['is ftp://', 'ftp://93.184.215.14/a.git'],
  ['is an scp-style address', 'git@github.com:a/b.git'],
  ['is not a URL', 'shop'],
  ['is empty', ''],
  ['holds a user and password', 'https://bob:hunter2@93.184.215.14/a.git'],
  ['holds a token as its user', 'https://ghp_token@93.184.215.14/a.git'],
  ['is http:// without SOURCE_ALLOW_LOCAL', 'http://93.184.215.14/a.git'],
  ['is file:// without SOURCE_ALLOW_LOCAL', 'file:///srv/git/shop.git'],
  ['is on loopback', 'https://127.0.0.1/a.git'],
  ['is on IPv6 loopback', 'https://[::1]/a.git'],
  ['is on a private network', 'https://10.1.2.3/a.git'],
  ['is the metadata address', 'https://169.254.169.254/latest'],
  ['is a loopback address in decimal', 'https://2130706433/a.git'],
  ['host resolves to loopback', 'https://localhost/a.git'],
];

describe('service settings', () => {
  let client: ApiClient;
  let projectId: string;
  let path: string;
  let one: (id: string) => string;
  const stored = (id: string) => app().models.services.findById(id).lean();

  beforeEach(async () => {
    ({ client, projectId, path, one } = await servicesOf(app().url));
  });

  it('default when a service is created with a name only, and every answer carries them', async () => {
    const created = await client.post(path, { name: 'web' });

    expect(created.status).toBe(201);
    expect(created.body).toMatchObject(DEFAULTS);
    expect((await client.get(one(created.body.id))).body).toEqual(created.body);
    expect((await client.get(path)).body).toEqual({ services: [created.body] });
  });

  it('are taken at creation and kept as given', async () => {
    const created = await client.post(path, { name: 'web', ...SETTINGS });

    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ ...SETTINGS, url: null });
    expect(await stored(created.body.id)).toMatchObject({ ...SETTINGS, url: null });
  });

  it('normalise the root directory and turn an empty command into none', async () => {
    const created = await client.post(path, {
      name: 'web',
      rootDirectory: './apps//web/',
      buildCommand: '   ',
      dockerfilePath: './docker//Dockerfile',
    });

    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      rootDirectory: 'apps/web',
      buildCommand: null,
      dockerfilePath: 'docker/Dockerfile',
    });
  });

  it('change one at a time with PATCH, the others kept', async () => {
    const service = await buildService(client, projectId, SETTINGS);

    const response = await client.patch(one(service.id), { startCommand: 'npm start' });

    expect(response.status).toBe(200);
    expect(response.body).toEqual({ ...service, startCommand: 'npm start' });
    expect(await stored(service.id)).toMatchObject({ ...SETTINGS, startCommand: 'npm start' });
  });

  it('are cleared by null: to none, or back to their default', async () => {
    const service = await buildService(client, projectId, SETTINGS);

    const response = await client.patch(one(service.id), {
      repository: null,
      branch: null,
      rootDirectory: null,
      buildCommand: null,
      startCommand: null,
      healthCheckPath: null,
      replicas: null,
      dockerfilePath: null,
    });

    expect(response.status).toBe(200);
    expect(response.body).toEqual({ ...service, ...DEFAULTS });
    expect(await stored(service.id)).toMatchObject({ ...DEFAULTS, name: service.name });
  });

  it('refuse a PATCH that changes nothing', async () => {
    const service = await buildService(client, projectId);

    const response = await client.patch(one(service.id), {});

    expect(response.status).toBe(400);
    expect(response.body).toEqual(invalid('name'));
  });

  it.each<[string, Record<string, unknown>, string]>([
    ...REFUSED_REPOSITORIES.map(([why, repository]): [string, Record<string, unknown>, string] => [
      `the repository ${why}`,
      { repository },
      'repository',
    ]),
    ['the branch is empty', { branch: '' }, 'branch'],
    ['the branch has ..', { branch: 'a..b' }, 'branch'],
    ['the branch starts with -', { branch: '-rf' }, 'branch'],
    ['the branch has a space', { branch: 'my branch' }, 'branch'],
    ['the branch ends in .lock', { branch: 'main.lock' }, 'branch'],
    ['the root directory is absolute', { rootDirectory: '/etc' }, 'rootDirectory'],
    ['the root directory climbs out', { rootDirectory: 'apps/../../etc' }, 'rootDirectory'],
    [
      'the build command is over 1,000 characters',
      { buildCommand: 'x'.repeat(1001) },
      'buildCommand',
    ],
    ['the start command holds a NUL', { startCommand: 'node\u0000x' }, 'startCommand'],
    ['the start command is not a string', { startCommand: 42 }, 'startCommand'],
    ['the health check path is relative', { healthCheckPath: 'healthz' }, 'healthCheckPath'],
    ['the health check path has a space', { healthCheckPath: '/a b' }, 'healthCheckPath'],
    ['replicas is 0', { replicas: 0 }, 'replicas'],
    ['replicas is 11', { replicas: 11 }, 'replicas'],
    ['replicas is not a whole number', { replicas: 1.5 }, 'replicas'],
    ['replicas is a string', { replicas: '2' }, 'replicas'],
    ['the Dockerfile path is absolute', { dockerfilePath: '/Dockerfile' }, 'dockerfilePath'],
    ['the Dockerfile path climbs out', { dockerfilePath: '../Dockerfile' }, 'dockerfilePath'],
    ['the Dockerfile path is empty', { dockerfilePath: ' ' }, 'dockerfilePath'],
    ['the Dockerfile path names the root', { dockerfilePath: './' }, 'dockerfilePath'],
    ['the Dockerfile path has a newline', { dockerfilePath: 'a\nb' }, 'dockerfilePath'],
    ['the Dockerfile path is not a string', { dockerfilePath: 1 }, 'dockerfilePath'],
    ['the url is given (it is read-only)', { url: 'http://x.localhost' }, 'url'],
  ])(
    'refuse with 400 VALIDATION_ERROR, on create and on PATCH, when %s',
    async (_case, body, field) => {
      const service = await buildService(client, projectId, SETTINGS);

      const created = await client.post(path, { name: 'refused', ...body });
      const patched = await client.patch(one(service.id), body);

      expect([created.status, patched.status]).toEqual([400, 400]);
      expect(created.body).toEqual(invalid(field));
      expect(patched.body).toEqual(invalid(field));
      expect(await app().models.services.countDocuments({ name: 'refused' })).toBe(0);
      expect(await stored(service.id)).toMatchObject(SETTINGS);
    },
  );

  it('say why a repository on a private address is refused', async () => {
    const response = await client.post(path, {
      name: 'web',
      repository: 'https://localhost/a.git',
    });

    expect(response.body.details).toEqual([
      { path: 'repository', message: expect.stringMatching(/public host.*loopback/) },
    ]);
  });
});

describe('service settings with SOURCE_ALLOW_LOCAL=true (the local stack)', () => {
  it.each([
    'http://127.0.0.1:9418/shop.git',
    'file:///tmp/fixtures/shop.git',
    'https://localhost/shop.git',
    'http://10.0.0.5/shop.git',
  ])('take the local repository %s', async (repository) => {
    const { client, path } = await servicesOf(localApp().url);

    const response = await client.post(path, { name: 'web', repository });

    expect(response.status).toBe(201);
    expect(response.body.repository).toBe(repository);
  });

  it.each([
    ['credentials', 'http://bob:hunter2@127.0.0.1/shop.git'],
    ['another scheme', 'ssh://127.0.0.1/shop.git'],
    ['a file URL with a host', 'file://server/shop.git'],
  ])('still refuse %s', async (_case, repository) => {
    const { client, path } = await servicesOf(localApp().url);

    const response = await client.post(path, { name: 'web', repository });

    expect(response.status).toBe(400);
    expect(response.body).toEqual(invalid('repository'));
  });
});
