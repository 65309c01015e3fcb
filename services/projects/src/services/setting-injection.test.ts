// Nothing a tenant writes becomes an option (contracts.md, "What a tenant's code can reach"): each
// setting that reaches a command line or a request the platform makes, tried with NUL, newline,
// carriage return and a leading dash, on create and on PATCH (libs/shared source-rules).
import { errorBody, useRunning } from '@platform/shared/testing';
import { apiClient, buildProject, buildService } from '../test/api-client';
import { SAMPLE_SETTINGS } from '../test/settings';
import { startTestApp } from '../test/test-app';

const app = useRunning(() => startTestApp({ SOURCE_ALLOW_LOCAL: 'true' }));

const invalid = (field: string) => ({
  ...errorBody('VALIDATION_ERROR'),
  details: [{ path: field, message: expect.any(String) }],
});

async function settingsApi() {
  const client = apiClient(app().url);
  const project = await buildProject(client);
  const path = `/api/projects/${project.id}/services`;
  const service = await buildService(client, project.id, SAMPLE_SETTINGS);
  return {
    create: (body: Record<string, unknown>) => client.post(path, { name: 'injected', ...body }),
    patch: (body: Record<string, unknown>) => client.patch(`${path}/${service.id}`, body),
    stored: () => app().models.services.findById(service.id).lean(),
    count: () => app().models.services.countDocuments({ name: 'injected' }),
  };
}

/** Sends `field` set to `value` to a new service (create) and to an existing one (PATCH). */
async function createAndPatch(field: string, value: string) {
  const api = await settingsApi();
  const created = await api.create({ [field]: value });
  const patched = await api.patch({ [field]: value });
  return { api, created, patched };
}

describe('a setting holding what could be read as an option or a second line', () => {
  it.each<[string, string, string]>([
    ['repository', 'NUL', 'file:///srv/app.git\u0000--upload-pack=touch /tmp/x'],
    ['repository', 'a newline', 'file:///srv/app.git\n--upload-pack=x'],
    ['repository', 'a carriage return', 'https://93.184.215.14/a\r.git'],
    ['repository', 'a leading dash', '--upload-pack=touch /tmp/x'],
    ['branch', 'NUL', 'main\u0000--upload-pack=x'],
    ['branch', 'a newline', 'main\n--upload-pack=x'],
    ['branch', 'a carriage return', 'ma\rin'],
    ['branch', 'a leading dash', '-x'],
    ['branch', 'an option of git fetch', '--upload-pack=touch /tmp/x'],
    ['branch', 'the end of options', '--end-of-options'],
    ['rootDirectory', 'NUL', 'apps\u0000--ro-bind'],
    ['rootDirectory', 'a newline', 'apps\nweb'],
    ['rootDirectory', 'a carriage return', 'apps\rweb'],
    ['buildCommand', 'NUL', 'npm ci\u0000--ro-bind\u0000/\u0000/host'],
    ['buildCommand', 'a carriage return', 'npm ci\r\nnpm run build'],
    ['startCommand', 'NUL', 'node server.js\u0000--bind'],
    ['startCommand', 'a carriage return', 'node\rserver.js'],
    ['healthCheckPath', 'NUL', '/healthz\u0000'],
    ['healthCheckPath', 'a newline (request splitting)', '/healthz\nHost: evil'],
    ['healthCheckPath', 'a carriage return and newline', '/healthz HTTP/1.1\r\nX-Injected: 1'],
    ['healthCheckPath', 'a leading dash', '-healthz'],
  ])('refuses %s with %s: 400 VALIDATION_ERROR, nothing stored', async (field, _case, value) => {
    const { api, created, patched } = await createAndPatch(field, value);

    expect([created.status, patched.status]).toEqual([400, 400]);
    expect(created.body).toEqual(invalid(field));
    expect(patched.body).toEqual(invalid(field));
    expect(await api.count()).toBe(0);
    expect(await api.stored()).toMatchObject(SAMPLE_SETTINGS);
  });

  it.each<[string, string, string]>([
    // Shell scripts span lines: a command is the script `sh -c` runs, never one of its options.
    ['buildCommand', 'newlines (a script)', 'npm ci\nnpm run build\n\tnpm test'],
    ['buildCommand', 'a leading dash', '--version'],
    ['startCommand', 'newlines (a script)', 'cd dist\nexec node server.js'],
    ['startCommand', 'a leading dash', '-c "touch /tmp/x"'],
    // Only ever a part of `/workspace/<rootDirectory>`: an absolute path, never an argument.
    ['rootDirectory', 'a leading dash', '--ro-bind/x'],
  ])('takes %s with %s, stored exactly as written', async (field, _case, value) => {
    const { api, created, patched } = await createAndPatch(field, value);

    expect([created.status, patched.status]).toEqual([201, 200]);
    expect(created.body[field]).toBe(value);
    expect(patched.body[field]).toBe(value);
    expect((await api.stored())?.[field as 'branch']).toBe(value);
  });
});
