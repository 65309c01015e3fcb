import { CHECKER_BUILD_TIMEOUT_MS } from './checker';
import { SERVICE_NAMES, containerEnv, mainContainer, objectsOfKind } from './kubernetes';
import { OVERLAYS, externalSecrets, rendered } from './test/rendered';

/**
 * Defence in depth (issue 21): MongoDB and Redis let in only clients that log in (Kafka's logins
 * are kafka.test.ts's), and every process listens on all of its pod's addresses only because it
 * is told to (HOST; outside a container the default is 127.0.0.1).
 */
describe.each(OVERLAYS)('the %s overlay', (overlay) => {
  const envOf = async () => {
    const { objects } = await rendered(overlay);
    return objectsOfKind(objects, 'Deployment').map((deployment) => ({
      name: deployment.metadata.name as string,
      env: containerEnv(mainContainer(deployment), objects, externalSecrets(overlay)).env,
    }));
  };

  it(
    'gives every process that uses MongoDB or Redis a URL with a user and a password',
    async () => {
      const urls = (await envOf()).flatMap(({ name, env }) =>
        ['MONGO_URL', 'REDIS_URL']
          .filter((key) => env[key])
          .map((key) => ({ name, key, url: new URL(env[key]!) })),
      );
      expect(urls.map(({ name, key }) => `${name} ${key}`).sort()).toEqual(
        [
          'auth MONGO_URL',
          'deployments MONGO_URL',
          'gateway REDIS_URL',
          'projects MONGO_URL',
          'webhooks MONGO_URL',
        ].sort(),
      );
      for (const { name, key, url } of urls) {
        expect([name, key, url.password.length > 0]).toEqual([name, key, true]);
        // Redis's default user has no name: only MongoDB's URL names one.
        if (key === 'MONGO_URL') expect([name, url.username.length > 0]).toEqual([name, true]);
      }
    },
    CHECKER_BUILD_TIMEOUT_MS,
  );

  it(
    'makes every process listen on all of its pod’s addresses (HOST=0.0.0.0)',
    async () => {
      const processes: string[] = [...SERVICE_NAMES, 'dev-idp'];
      for (const { name, env } of await envOf()) {
        if (!processes.includes(name)) continue;
        expect([name, env.HOST]).toEqual([name, '0.0.0.0']);
      }
    },
    CHECKER_BUILD_TIMEOUT_MS,
  );
});
