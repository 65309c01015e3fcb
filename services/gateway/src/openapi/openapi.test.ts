import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { errorBody, useRunning } from '@platform/shared/testing';
import { startGateway } from '../test/start-gateway';
import { OPENAPI_PATH } from './openapi.routes';

const document = {
  openapi: '3.1.0',
  info: { title: 'Platform API', version: '1' },
  paths: {
    '/api/projects': { get: {}, post: {} },
    '/api/projects/{projectId}': { parameters: [], get: {}, patch: {}, delete: {} },
    '/api/accounts/logout': { post: {} },
    [OPENAPI_PATH]: { get: {} },
  },
};

const tempDir = () =>
  useRunning(async () => {
    const path = await mkdtemp(join(tmpdir(), 'gateway-openapi-'));
    return { path, close: () => rm(path, { recursive: true, force: true }) };
  });

describe('GET /api/openapi.json', () => {
  const dir = tempDir();
  const gateway = useRunning(() =>
    startGateway({}, { openApiFile: join(dir().path, 'openapi.json') }),
  );

  it('answers 404 NOT_FOUND, not 401, while the document does not exist', async () => {
    const response = await gateway().request(OPENAPI_PATH);

    expect(response.status).toBe(404);
    expect(response.body).toEqual(errorBody('NOT_FOUND', 'OpenAPI document not found.'));
  });

  it('serves the document as JSON without a session once it exists', async () => {
    await writeFile(join(dir().path, 'openapi.json'), JSON.stringify(document));

    const response = await gateway().request(OPENAPI_PATH);

    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.body).toEqual(document);
  });
});

describe('a method the document does not give a path', () => {
  const dir = useRunning(async () => {
    const path = await mkdtemp(join(tmpdir(), 'gateway-openapi-'));
    await writeFile(join(path, 'openapi.json'), JSON.stringify(document));
    return { path, close: () => rm(path, { recursive: true, force: true }) };
  });
  const gateway = useRunning(() =>
    startGateway({}, { openApiFile: join(dir().path, 'openapi.json') }),
  );

  it.each([
    ['PUT', '/api/projects', 'GET, POST, HEAD'],
    ['DELETE', '/api/projects/', 'GET, POST, HEAD'],
    ['POST', '/api/projects/65f000000000000000000001', 'GET, DELETE, PATCH, HEAD'],
    ['OPTIONS', '/api/projects/anything', 'GET, DELETE, PATCH, HEAD'],
    ['GET', '/api/accounts/logout', 'POST'],
    ['POST', OPENAPI_PATH, 'GET, HEAD'],
  ])(
    'answers %s %s with 405 METHOD_NOT_ALLOWED and Allow: %s, to a signed-in client',
    async (method, path, allow) => {
      const { cookie } = await gateway().logIn();

      const response = await gateway().request(path, { method, cookie });

      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe(allow);
      expect(response.body).toEqual(errorBody('METHOD_NOT_ALLOWED', new RegExp(`^${method} `)));
      expect(response.headers.get('ratelimit-limit')).not.toBeNull();
    },
  );

  it('answers 405 without a session too, and sends nothing to the service', async () => {
    const before = gateway().stubs.projects.received.length;

    const response = await gateway().request('/api/projects', { method: 'PUT' });

    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, POST, HEAD');
    expect(gateway().stubs.projects.received).toHaveLength(before);
  });

  it('leaves documented methods and undocumented paths as they were', async () => {
    const { cookie } = await gateway().logIn();

    const documented = await gateway().request('/api/projects', { cookie });
    const anonymous = await gateway().request('/api/projects');
    const undocumented = await gateway().request('/api/projects/p1/webhooks', {
      method: 'PUT',
      cookie,
    });

    expect(documented.status).toBe(200);
    expect(anonymous.status).toBe(401);
    // Not in this document: on to the service, whose answer comes back.
    expect(undocumented.status).toBe(200);
    expect(gateway().stubs.webhooks.received.at(-1)).toMatchObject({ method: 'PUT' });
  });
});
