import fs from 'node:fs';
import path from 'node:path';
import { CHECKER_BUILD_TIMEOUT_MS, REPO_ROOT, type K8sObject } from './checker';
import { findObject, readEnvFile } from './kubernetes';
import { composeProject, rendered } from './test/rendered';

/**
 * What the platform shows to the network and which secrets it publishes (contracts.md, Trust):
 * the Ingress routes only the API and the dashboard's pages of the platform's host (and the apps'
 * hosts, which are the apps'), docker-compose listens on this machine only unless told
 * otherwise, and every secret the repository hands out for local use is one the services refuse
 * in production.
 */
const { EXAMPLE_SECRETS } = require(path.join(REPO_ROOT, 'libs/shared/src/config.ts')) as {
  EXAMPLE_SECRETS: readonly string[];
};

const SECRET_NAME = /SECRET|ENCRYPTION_KEY|PASSWORD/;

/** The paths of each host the Ingress serves: the platform's host, then the apps' wildcard. */
const ingressPaths = (objects: K8sObject[]) =>
  findObject(objects, 'Ingress', 'gateway').spec.rules.map(
    (rule: { host: string; http: { paths: { path: string }[] } }) =>
      rule.http.paths.map((p) => p.path),
  );

/** The API, and the web dashboard's pages and hashed assets (services/gateway/src/dashboard). */
const DASHBOARD_AND_API = ['/api', '/', '/sign-in', '/projects', '/assets'];
/**
 * Every path of an app's host (`*.<APPS_DOMAIN>`): the gateway forwards such a host to the apps'
 * router before anything of its own (apps-routing.test.ts checks the host agrees with it).
 */
const APP_HOSTS = ['/'];

describe('what reaches the network', () => {
  it.each(['base', 'production'] as const)(
    'the %s Ingress routes only /api and the dashboard of the platform’s host (so /metrics and /readyz stay inside the cluster there), and every path of the apps’ hosts',
    async (overlay) => {
      expect(ingressPaths((await rendered(overlay)).objects)).toEqual([
        DASHBOARD_AND_API,
        APP_HOSTS,
      ]);
    },
    CHECKER_BUILD_TIMEOUT_MS,
  );

  it(
    'the development Ingress adds only the sign-in page',
    async () => {
      expect(ingressPaths((await rendered('development')).objects)).toEqual([
        [...DASHBOARD_AND_API, '/dev'],
        APP_HOSTS,
      ]);
    },
    CHECKER_BUILD_TIMEOUT_MS,
  );

  it(
    'docker-compose publishes nothing but the gateway, on 127.0.0.1 by default',
    async () => {
      const { project } = await composeProject();
      const published = Object.entries(project!.services).flatMap(([name, service]) =>
        (service.ports ?? []).map((port: { host_ip?: string; published?: string }) => ({
          name,
          hostIp: port.host_ip,
          published: port.published,
        })),
      );
      expect(published).toEqual([{ name: 'gateway', hostIp: '127.0.0.1', published: '8080' }]);
    },
    CHECKER_BUILD_TIMEOUT_MS,
  );
});

describe('the secrets published for local use', () => {
  const startScript = fs.readFileSync(path.join(REPO_ROOT, 'scripts/start.sh'), 'utf8');
  // A default written in the script (`NAME="${NAME:-value}"`, exported or not), not made by it.
  const fromStartScript = [...startScript.matchAll(/^(?:export )?(\w+)="\$\{\1:-([^$}][^}]*)\}"/gm)]
    .filter(([, name]) => SECRET_NAME.test(name!))
    .map(([, name, value]) => ({ where: `scripts/start.sh ${name}`, value: value! }));
  const fromDevelopmentOverlay = Object.entries(
    readEnvFile(path.join(REPO_ROOT, 'k8s/overlays/development/platform-secrets.dev.env')),
  )
    .filter(([name]) => SECRET_NAME.test(name))
    .map(([name, value]) => ({ where: `k8s development ${name}`, value }));

  it('are found where they are defined', () => {
    expect(fromDevelopmentOverlay.length).toBeGreaterThanOrEqual(3);
  });

  it('are none in scripts/start.sh: npm start makes its secrets once per machine', () => {
    expect(fromStartScript).toEqual([]);
    for (const name of ['INTERNAL_SECRET', 'SESSION_SECRET', 'ENCRYPTION_KEY']) {
      expect(startScript).toMatch(new RegExp(`^${name}="\\$\\{${name}:-\\$\\(dev_secret `, 'm'));
    }
  });

  it(
    'are every one refused in production (listed in EXAMPLE_SECRETS)',
    async () => {
      const { project } = await composeProject();
      const fromCompose = Object.entries(project!.services).flatMap(([name, service]) =>
        Object.entries<string>(service.environment ?? {})
          .filter(([key]) => SECRET_NAME.test(key))
          .map(([key, value]) => ({ where: `docker-compose ${name} ${key}`, value })),
      );
      expect(fromCompose.length).toBeGreaterThan(0);
      const unlisted = [...fromStartScript, ...fromDevelopmentOverlay, ...fromCompose].filter(
        ({ value }) => !EXAMPLE_SECRETS.includes(value),
      );
      expect(unlisted).toEqual([]);
    },
    CHECKER_BUILD_TIMEOUT_MS,
  );
});
