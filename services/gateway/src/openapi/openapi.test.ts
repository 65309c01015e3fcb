import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGateway, type TestGateway } from '../test/start-gateway';
import { OPENAPI_PATH } from './openapi.routes';

describe('GET /api/openapi.json', () => {
  let dir: string;
  let gateway: TestGateway;
  const document = { openapi: '3.1.0', info: { title: 'Platform API', version: '1' }, paths: {} };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gateway-openapi-'));
    gateway = await startGateway({}, { openApiFile: join(dir, 'openapi.json') });
  });
  afterAll(async () => {
    await gateway.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('answers 404 NOT_FOUND, not 401, while the document does not exist', async () => {
    const response = await gateway.request(OPENAPI_PATH);

    expect(response.status).toBe(404);
    expect(response.body).toEqual({ error: 'NOT_FOUND', message: 'OpenAPI document not found.' });
  });

  it('serves the document as JSON without a session once it exists', async () => {
    await writeFile(join(dir, 'openapi.json'), JSON.stringify(document));

    const response = await gateway.request(OPENAPI_PATH);

    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.body).toEqual(document);
  });
});
