// Nothing a tenant writes becomes an option (contracts.md, Variables and "What a tenant's code can
// reach"): a variable's name and value tried with NUL, newline, carriage return and a leading dash.
import { Types } from 'mongoose';
import { errorBody, useRunning } from '@platform/shared/testing';
import { buildAccountService } from '../test/api-client';
import { startTestApp } from '../test/test-app';

const app = useRunning(() => startTestApp());

async function variablesApi() {
  const { client, projectId, serviceId } = await buildAccountService(app().url);
  const base = `/api/projects/${projectId}/services/${serviceId}/variables`;
  return {
    put: (name: string, body: unknown) => client.put(`${base}/${name}`, body),
    count: () =>
      app().models.variables.countDocuments({ serviceId: new Types.ObjectId(serviceId) }),
  };
}

const invalidAt = (path: string) => ({
  ...errorBody('VALIDATION_ERROR'),
  details: [{ path, message: expect.any(String) }],
});

describe('a variable holding what could be read as an option or a second line', () => {
  it.each([
    ['NUL', 'X%00--ro-bind'],
    ['a newline', 'X%0AY'],
    ['a carriage return', 'X%0D'],
    ['a leading dash', '--ro-bind'],
    ['a single leading dash', '-X'],
  ])('refuses a name with %s: 400 VALIDATION_ERROR', async (_case, encodedName) => {
    const api = await variablesApi();

    const response = await api.put(encodedName, { value: 'x' });

    expect(response.status).toBe(400);
    expect(response.body).toEqual(invalidAt('name'));
    expect(await api.count()).toBe(0);
  });

  it.each([
    ['plain', false],
    ['secret', true],
  ])(
    'refuses a %s value with NUL (the issue’s sandbox option): 400 VALIDATION_ERROR',
    async (_kind, secret) => {
      const api = await variablesApi();

      const response = await api.put('X', { value: 'x\u0000--ro-bind\u0000/\u0000/host', secret });

      expect(response.status).toBe(400);
      expect(response.body).toEqual(invalidAt('value'));
      expect(response.body.details[0].message).toMatch(/NUL/);
      expect(await api.count()).toBe(0);
    },
  );

  it.each([
    ['newlines (a PEM key)', '-----BEGIN KEY-----\nabc\n-----END KEY-----\n'],
    ['carriage returns', 'line one\r\nline two'],
    ['a leading dash', '--ro-bind / /host'],
  ])(
    'takes a value with %s as it is: a value is only ever an environment value',
    async (_case, value) => {
      const api = await variablesApi();

      const response = await api.put('X', { value });

      expect(response.status).toBe(201);
      expect(response.body.value).toBe(value);
    },
  );
});
