import express from 'express';
import { pino } from 'pino';
import { httpLogger, type HttpLoggerOptions } from './logger';
import { startTestServer, waitFor } from './testing';

const LEVELS = { debug: 20, info: 30, warn: 40, error: 50 };

/** An app answering GET /status/:code with that status, logging through httpLogger at debug. */
async function startLoggedApp(options?: HttpLoggerOptions) {
  const lines: { level: number; req: { id: string }; res: { statusCode: number } }[] = [];
  const logger = pino(
    { level: 'debug' },
    { write: (line: string) => lines.push(JSON.parse(line)) },
  );
  const app = express();
  app.use(httpLogger(logger, options));
  app.get('/status/:code', (req, res) => {
    res.status(Number(req.params.code)).end();
  });
  const server = await startTestServer(app);
  /** The level the request with this status was logged at. */
  const levelOf = async (status: number) => {
    const requestId = `status-${status}-${Date.now()}`;
    await fetch(`${server.url}/status/${status}`, {
      headers: { 'x-request-id': requestId },
      redirect: 'manual',
    });
    const line = await waitFor(() => lines.find((l) => l.req?.id === requestId), {
      what: `the log line of ${requestId}`,
    });
    return line.level;
  };
  return { server, levelOf };
}

type LoggedApp = Awaited<ReturnType<typeof startLoggedApp>>;

describe('httpLogger', () => {
  describe('by default', () => {
    let app: LoggedApp;

    beforeAll(async () => {
      app = await startLoggedApp();
    });
    afterAll(() => app.server.close());

    it('logs 2xx and 3xx answers at info, 4xx at warn and 5xx at error', async () => {
      expect(await app.levelOf(200)).toBe(LEVELS.info);
      expect(await app.levelOf(302)).toBe(LEVELS.info);
      expect(await app.levelOf(404)).toBe(LEVELS.warn);
      expect(await app.levelOf(503)).toBe(LEVELS.error);
    });
  });

  describe('with successLevel debug', () => {
    let app: LoggedApp;

    beforeAll(async () => {
      app = await startLoggedApp({ successLevel: 'debug' });
    });
    afterAll(() => app.server.close());

    it('logs 2xx and 3xx answers at debug and keeps 4xx at warn and 5xx at error', async () => {
      expect(await app.levelOf(204)).toBe(LEVELS.debug);
      expect(await app.levelOf(304)).toBe(LEVELS.debug);
      expect(await app.levelOf(429)).toBe(LEVELS.warn);
      expect(await app.levelOf(500)).toBe(LEVELS.error);
    });
  });
});
