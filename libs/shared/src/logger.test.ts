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

type Level = keyof typeof LEVELS;

describe.each<{ setting: string; options?: HttpLoggerOptions; levels: [number, Level][] }>([
  {
    setting: 'by default',
    levels: [
      [200, 'info'],
      [302, 'info'],
      [404, 'warn'],
      [503, 'error'],
    ],
  },
  {
    setting: 'with successLevel debug',
    options: { successLevel: 'debug' },
    levels: [
      [204, 'debug'],
      [304, 'debug'],
      [429, 'warn'],
      [500, 'error'],
    ],
  },
])('httpLogger $setting', ({ options, levels }) => {
  let app: Awaited<ReturnType<typeof startLoggedApp>>;

  beforeAll(async () => {
    app = await startLoggedApp(options);
  });
  afterAll(() => app.server.close());

  it.each(levels)('logs a %d answer at %s', async (status, level) => {
    expect(await app.levelOf(status)).toBe(LEVELS[level]);
  });
});
