import { Redis } from 'ioredis';
import { useRunning, waitFor } from '@platform/shared/testing';
import { startGateway, type TestGateway } from '../test/start-gateway';
import { STUB_ACCOUNT } from '../test/stubs';

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
  const sentinel = `${gateway.config.REDIS_PREFIX}sentinel`;
  const isSentinel = (args: string[]) => args[1] === sentinel;
  return {
    /**
     * Every command the gateway has sent so far: a sentinel goes out on the gateway's own
     * connection, whose commands Redis runs in order, so all sent before it are seen before it.
     */
    async sentSoFar() {
      await gateway.redis.exists(sentinel);
      await waitFor(() => seen.some(isSentinel), { what: 'the sentinel to be seen' });
      return seen.slice(0, seen.findIndex(isSentinel));
    },
    stop: () => monitor.disconnect(),
  };
}

describe('Redis commands of a proxied request', () => {
  const gateway = useRunning(() => startGateway());

  it('reads the session and counts the IP, session and account limits in one script call, writing nothing else', async () => {
    const { cookie, sessionId } = await gateway().logIn();
    const watch = await watchCommands(gateway());
    try {
      const response = await gateway().request('/api/projects', { cookie });
      expect(response.status).toBe(200);
      const sent = await watch.sentSoFar();

      expect(sent.map(([name]) => name!.toLowerCase())).toEqual(['get', 'evalsha']);
      expect(sent[0]).toEqual(['get', gateway().sessionKey(sessionId)]);
      const [, , keyCount, ipKey, sessionKey, accountKey] = sent[1]!;
      expect(keyCount).toBe('3');
      expect(ipKey).toMatch(new RegExp(`^${gateway().config.REDIS_PREFIX}rl:ip:`));
      expect(sessionKey).toMatch(new RegExp(`^${gateway().config.REDIS_PREFIX}rl:session:`));
      expect(accountKey).toBe(`${gateway().config.REDIS_PREFIX}rl:account:${STUB_ACCOUNT.id}`);
    } finally {
      watch.stop();
    }
  });
});
