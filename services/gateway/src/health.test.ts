import { errorBody, useRunning } from '@platform/shared/testing';
import { startGateway } from './test/start-gateway';

describe('gateway health and metrics', () => {
  const gateway = useRunning(() => startGateway());

  it('answers /healthz and /readyz (Redis answers) without a session', async () => {
    const health = await gateway().request('/healthz');
    const ready = await gateway().request('/readyz');

    expect(health).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(ready).toMatchObject({ status: 200, body: { status: 'ok', checks: { redis: 'ok' } } });
  });

  it('serves Prometheus metrics labelled with the gateway', async () => {
    await gateway().request('/healthz');

    const response = await fetch(`${gateway().url}/metrics`);
    const text = await response.text();

    expect(response.status).toBe(200);
    expect(text).toMatch(/http_request_duration_seconds_count\{[^}]*service="gateway"/);
  });

  it('sets security headers and never says it is express', async () => {
    const response = await fetch(`${gateway().url}/healthz`);

    expect(response.headers.get('x-powered-by')).toBeNull();
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('content-security-policy')).toContain("default-src 'self'");
  });

  it('answers an unknown path outside /api with a JSON 404', async () => {
    const response = await gateway().request('/nothing-here');

    expect(response.status).toBe(404);
    expect(response.body).toEqual(errorBody('NOT_FOUND'));
  });
});
