import {
  errorBody,
  parseBody,
  requestJson,
  startTestServer,
  useRunning,
  validationErrorAt,
} from './helpers';

describe('parseBody', () => {
  it.each([
    ['JSON', '{"status":"ok"}', { status: 'ok' }],
    ['text that is not JSON', 'Not Found', 'Not Found'],
    ['an empty body', '', null],
  ])('reads %s', (_case, text, body) => {
    expect(parseBody(text)).toEqual(body);
  });
});

describe('useRunning', () => {
  const closed: string[] = [];

  describe('in a block', () => {
    const server = useRunning(async () => {
      const started = await startTestServer((_req, res) => res.end('{"hello":"world"}'));
      return { ...started, close: () => started.close().then(() => void closed.push(started.url)) };
    });

    it('has started it before the tests', async () => {
      const response = await requestJson(server().url);

      expect(response).toMatchObject({ status: 200, body: { hello: 'world' } });
      expect(closed).toEqual([]);
    });
  });

  it('has closed it after the tests of the block', () => {
    expect(closed).toEqual([expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/)]);
  });
});

describe('errorBody', () => {
  const body = { error: 'UNAUTHORIZED', message: 'Login is required.' };

  it.each([
    ['any message', undefined],
    ['the exact message', 'Login is required.'],
    ['a message matching a pattern', /login is required/i],
  ])('matches an error body with %s', (_case, message) => {
    expect(body).toEqual(errorBody('UNAUTHORIZED', message));
  });

  it.each([
    ['another error', { ...body, error: 'FORBIDDEN' }],
    ['another message', { ...body, message: 'Go away.' }],
    ['a field more', { ...body, details: [] }],
  ])('does not match a body with %s', (_case, other) => {
    expect(other).not.toEqual(errorBody('UNAUTHORIZED', /login is required/i));
  });
});

describe('validationErrorAt', () => {
  const body = {
    error: 'VALIDATION_ERROR',
    message: 'Invalid request.',
    details: [
      { path: 'name', message: 'Required' },
      { path: 'email', message: 'Invalid email' },
    ],
  };

  it('matches a VALIDATION_ERROR body whose details name the field', () => {
    expect(body).toEqual(validationErrorAt('email'));
  });

  it('does not match one whose details name other fields only', () => {
    expect(body).not.toEqual(validationErrorAt('sub'));
  });
});
