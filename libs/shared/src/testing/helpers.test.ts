import { parseBody, requestJson, startTestServer, useRunning } from './helpers';

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
