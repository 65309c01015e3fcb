import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { execFileSync } from 'node:child_process';
import { waitFor, type JsonResponse } from '@platform/shared/testing';
import { WebClient, waitForDeployment } from './support/client';

type OpenApi = {
  paths: Record<string, Record<string, any>>;
  components: { responses: Record<string, any> };
};

/**
 * The OpenAPI document the gateway serves is valid OpenAPI 3.1, and real responses match it:
 * every response of a client's journey is checked against the schema documented for its
 * path, method and status (schemas forbid undocumented fields).
 */
describe('the OpenAPI document', () => {
  let doc: OpenApi;
  let ajv: Ajv2020;
  const checked: string[] = [];

  beforeAll(async () => {
    const res = await new WebClient().get('/api/openapi.json');
    expect(res.status).toBe(200);
    doc = res.body;
    ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema({ ...doc, $id: 'openapi.json' });
  });

  function templateOf(path: string): string {
    const bare = path.split('?')[0]!;
    const match = Object.keys(doc.paths).find((template) =>
      new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(bare),
    );
    if (!match) throw new Error(`${bare} is not documented`);
    return match;
  }

  /** Asserts that `res` is documented for the request and matches the documented schema. */
  function expectDocumented(method: string, path: string, res: JsonResponse) {
    const template = templateOf(path);
    const operation = doc.paths[template]![method.toLowerCase()];
    expect(operation).toBeDefined();
    const status = String(res.status);
    let response = operation.responses[status];
    if (!response)
      throw new Error(`${method} ${template} answered ${res.status}, which is not documented`);
    // Every schema is compiled where it stands in the document, so its $refs resolve.
    const escape = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');
    let pointer = ['paths', template, method.toLowerCase(), 'responses', status]
      .map(escape)
      .join('/');
    if (response.$ref) {
      pointer = response.$ref.slice(2);
      response = doc.components.responses[response.$ref.split('/').pop()];
    }
    if (!response.content?.['application/json']?.schema) {
      expect(res.body).toBeNull();
    } else {
      const validate = ajv.getSchema(`openapi.json#/${pointer}/content/application~1json/schema`)!;
      if (!validate(res.body)) {
        throw new Error(
          `${method} ${path} → ${res.status} does not match ${template}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(res.body)}`,
        );
      }
    }
    checked.push(`${method} ${template} ${res.status}`);
  }

  async function call(client: WebClient, method: string, path: string, body?: unknown) {
    const res = await client.request(method, path, body);
    expectDocumented(method, path, res);
    return res;
  }

  it('is valid OpenAPI 3.1', async () => {
    // The validator is an ES module; node loads it natively in a child process.
    const script = `
      import { Validator } from '@seriousme/openapi-schema-validator';
      const chunks = [];
      for await (const chunk of process.stdin) chunks.push(chunk);
      const result = await new Validator().validate(JSON.parse(Buffer.concat(chunks).toString()));
      process.stdout.write(JSON.stringify(result));`;
    const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: __dirname,
      input: JSON.stringify(doc),
    });
    const result = JSON.parse(output.toString());
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect((doc as any).openapi).toBe('3.1.0');
  });

  it('documents every response of a client journey, errors included', async () => {
    const anonymous = new WebClient();
    await call(anonymous, 'GET', '/api/projects');

    const client = new WebClient();
    const login = await client.signIn();
    expectDocumented('POST', '/api/accounts/google-auth-login-callback', login);
    await call(client, 'GET', '/api/accounts/me');

    await call(client, 'POST', '/api/projects', { name: '' });
    const project = await call(client, 'POST', '/api/projects', {
      name: `Documented ${Date.now()}`,
      description: 'd',
    });
    await call(client, 'POST', '/api/projects', { name: project.body.name });
    await call(client, 'GET', '/api/projects');
    await call(client, 'GET', '/api/projects?limit=1');
    const p = `/api/projects/${project.body.id}`;
    await call(client, 'GET', p);
    await call(client, 'GET', '/api/projects/not-an-id');
    await call(client, 'PATCH', p, { description: 'updated' });

    const service = await call(client, 'POST', `${p}/services`, { name: 'api' });
    await call(client, 'GET', `${p}/services`);
    const s = `${p}/services/${service.body.id}`;
    await call(client, 'GET', s);
    await call(client, 'PATCH', s, { name: 'api-2' });

    const d = `${s}/deployments`;
    await call(client, 'POST', d, { commitHash: 'not-hex' });
    const deployment = await call(client, 'POST', d, {
      commitHash: 'abcdef0',
      commitMessage: 'first',
    });
    await waitForDeployment(client, `${d}/${deployment.body.id}`, ['DEPLOYED', 'FAILED']);
    await call(client, 'GET', d);
    await call(client, 'GET', `${d}/${deployment.body.id}`);
    await call(client, 'POST', `${d}/${deployment.body.id}/cancel`);
    const running = await call(client, 'POST', d, {
      commitHash: 'abcdef1',
      commitMessage: 'slow one',
    });
    await call(client, 'POST', `${d}/${running.body.id}/cancel`);

    const webhook = await call(client, 'POST', `${p}/webhooks`, {
      url: 'http://127.0.0.1:9/hooks',
    });
    const w = `${p}/webhooks/${webhook.body.id}`;
    await call(client, 'GET', `${p}/webhooks`);
    await call(client, 'GET', w);
    await call(client, 'PATCH', w, { enabled: false });
    await call(client, 'POST', `${w}/test`); // 409 while disabled
    await call(client, 'PATCH', w, { rotateSecret: true, enabled: true });
    await call(client, 'POST', `${w}/test`);
    await call(client, 'GET', `${p}/webhooks?limit=1`);
    const deliveries = await waitFor(
      async () => {
        const res = await call(client, 'GET', `${w}/deliveries`);
        return res.body.deliveries.length > 0 ? res : null;
      },
      { what: 'the test delivery to be recorded' },
    );
    await call(client, 'GET', `${w}/deliveries?limit=1`);
    const delivery = await call(
      client,
      'GET',
      `${w}/deliveries/${deliveries.body.deliveries[0].id}`,
    );
    expect(delivery.body.payload).toMatchObject({ type: 'webhook.test', version: 1 });
    await call(client, 'DELETE', w);

    await call(client, 'DELETE', s);
    await call(client, 'DELETE', p);
    await call(client, 'GET', p);
    await call(client, 'POST', '/api/accounts/logout');
    await call(client, 'GET', '/api/accounts/me');

    expect(new Set(checked).size).toBeGreaterThanOrEqual(30);
  });
});
