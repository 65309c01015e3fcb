import { connectMongo } from '@platform/shared';
import {
  FIXTURE_APP,
  testInfraUrls,
  testLogger,
  useAppRepository,
  useRunning,
  waitFor,
} from '@platform/shared/testing';
import { useSignedIn, waitForDeployment } from './support/client';
import { startReceiver } from './support/receiver';

/** The e2e stack's databases (scripts/start.sh: <stack>_<service>). */
const DATABASES = ['e2e_auth', 'e2e_projects', 'e2e_deployments', 'e2e_webhooks'];

/**
 * Secrets at rest (contracts.md, Trust inside the platform): a copy of the databases gives no
 * usable secret. A webhook's signing secret (also after a rotation) and a secret variable that a
 * build and an app print go through every service; then every document of every platform
 * database is read and none holds either value.
 */
describe('secrets at rest, end to end', () => {
  const client = useSignedIn('Secrets');
  const repository = useAppRepository();
  const receiver = useRunning(startReceiver);
  const mongo = useRunning(async () => {
    const connection = await connectMongo({
      url: testInfraUrls().mongoUrl,
      dbName: DATABASES[0]!,
      logger: testLogger(),
    });
    return { connection, close: () => connection.close() };
  });

  /** Every document of every collection of the platform's databases, as JSON. */
  async function everyDocument(): Promise<string[]> {
    const texts: string[] = [];
    for (const name of DATABASES) {
      const db = mongo().connection.useDb(name, { useCache: true }).db!;
      for (const { name: collection } of await db.listCollections().toArray()) {
        for (const doc of await db.collection(collection).find({}).toArray()) {
          texts.push(`${name}.${collection} ${JSON.stringify(doc)}`);
        }
      }
    }
    return texts;
  }

  it('keeps no webhook secret and no secret variable in clear in any database', async () => {
    const secretValue = `s3cret-${Date.now()}-do-not-store`;
    const commit = await repository().commit({ printVariables: ['API_TOKEN'] });
    const project = await client.post('/api/projects', { name: `Secrets ${Date.now()}` });
    const projectPath = `/api/projects/${project.body.id}`;
    const service = await client.post(`${projectPath}/services`, {
      name: 'web',
      repository: repository().url,
      ...FIXTURE_APP,
    });
    const servicePath = `${projectPath}/services/${service.body.id}`;
    const put = await client.request('PUT', `${servicePath}/variables/API_TOKEN`, {
      value: secretValue,
      secret: true,
    });
    expect(put.status).toBe(201);
    const webhook = await client.post(`${projectPath}/webhooks`, { url: receiver().url });
    expect(webhook.status).toBe(201);
    const rotated = await client.patch(`${projectPath}/webhooks/${webhook.body.id}`, {
      rotateSecret: true,
    });
    expect(rotated.body.secret).toMatch(/^whsec_/);

    const trigger = await client.post(`${servicePath}/deployments`, { commitHash: commit.hash });
    const deployed = await waitForDeployment(
      client,
      `${servicePath}/deployments/${trigger.body.id}`,
      ['DEPLOYED', 'FAILED'],
    );
    expect(deployed.status).toBe('DEPLOYED');
    // The build and the app printed it: the log shows ****.
    expect(deployed.logs).toContain('API_TOKEN=****');
    await waitFor(
      () =>
        receiver().received.filter((w) => w.body.data?.deploymentId === trigger.body.id).length >=
        3,
      { what: 'the deployment’s webhooks' },
    );

    const documents = await everyDocument();
    expect(documents.length).toBeGreaterThan(10);
    const secrets = [secretValue, webhook.body.secret, rotated.body.secret];
    const secretParts = secrets.map((s: string) => s.replace(/^whsec_/, ''));
    const leaks = documents.filter((text) => secretParts.some((part) => text.includes(part)));
    expect(leaks).toEqual([]);
  });
});
