import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { errorBody, useRunning } from '@platform/shared/testing';
import { startGateway } from '../test/start-gateway';
import { OPENAPI_PATH } from './openapi.routes';

describe('GET /api/openapi.json', () => {
  const document = { openapi: '3.1.0', info: { title: 'Platform API', version: '1' }, paths: {} };
  const dir = useRunning(async () => {
    const path = await mkdtemp(join(tmpdir(), 'gateway-openapi-'));
    return { path, close: () => rm(path, { recursive: true, force: true }) };
  });
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
