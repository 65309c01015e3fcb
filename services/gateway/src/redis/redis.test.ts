import { Redis } from 'ioredis';
import { waitFor } from '@platform/shared/testing';
import { startGateway, type TestGateway } from '../test/start-gateway';

/** Watches, through MONITOR, the commands the gateway sends that touch its own keys. */
async function watchCommands(gateway: TestGateway) {
  // monitor() opens a connection of its own; the client it is called on never connects.
  const monitor = await new Redis(gateway.config.REDIS_URL, { lazyConnect: true }).monitor();
  const seen: string[][] = [];
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    // Commands run by a script are reported too, with source "lua": the script call is enough.
    if (source !== 'lua' && args.some((arg) => arg.startsWith(gateway.config.REDIS_PREFIX))) {
      seen.push(args);
    }
  });
  return { seen, stop: () => monitor.disconnect() };
}

describe('Redis commands of a proxied request', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startGateway();
  });
  afterAll(() => gateway.close());

  it('reads the session and counts the IP and session limits in one script call, writing nothing else', async () => {
    const { cookie, sessionId } = await gateway.logIn();
    const watch = await watchCommands(gateway);
    try {
      const response = await gateway.request('/api/projects', { cookie });
      expect(response.status).toBe(200);
      await waitFor(async () => watch.seen.length >= 2, { what: 'the commands to be seen' });
      // Anything more (an EXPIRE from a touch, a second counter) would follow within this pause.
      await new Promise((resolve) => setTimeout(resolve, 300));

      expect(watch.seen.map(([name]) => name!.toLowerCase())).toEqual(['get', 'evalsha']);
      expect(watch.seen[0]).toEqual(['get', gateway.sessionKey(sessionId)]);
      const [, , keyCount, ipKey, sessionKey] = watch.seen[1]!;
      expect(keyCount).toBe('2');
      expect(ipKey).toMatch(new RegExp(`^${gateway.config.REDIS_PREFIX}rl:ip:`));
      expect(sessionKey).toMatch(new RegExp(`^${gateway.config.REDIS_PREFIX}rl:session:`));
    } finally {
      watch.stop();
    }
  });
});
