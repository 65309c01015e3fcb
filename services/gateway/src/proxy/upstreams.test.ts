import { upstreamFor } from './upstreams';

describe('upstreamFor', () => {
  it.each([
    ['/api/accounts/me', 'auth'],
    ['/api/accounts', 'auth'],
    ['/api/projects', 'projects'],
    ['/api/projects/p1', 'projects'],
    ['/api/projects/p1/services', 'projects'],
    ['/api/projects/p1/services/s1', 'projects'],
    ['/api/projects/p1/services/s1/deployments', 'deployments'],
    ['/api/projects/p1/services/s1/deployments/d1/cancel', 'deployments'],
    ['/api/projects/p1/webhooks', 'webhooks'],
    ['/api/projects/p1/webhooks/w1/deliveries/x/redeliver', 'webhooks'],
  ])('routes %s to %s', (path, upstream) => {
    expect(upstreamFor(path)).toBe(upstream);
  });

  it.each([
    '/api/accountsx',
    '/api/projectsx',
    '/api/openapi.json',
    '/internal/projects/p1',
    '/api/projects/p1/../../internal/projects/p1',
    '/api/projects/./p1',
    '/api/projects/%2E%2e/x',
    '/api/projects/p1%2fservices',
    '/api/projects/p1\\..',
  ])('routes %s nowhere', (path) => {
    expect(upstreamFor(path)).toBeUndefined();
  });

  it('keeps a deployments-like path under another prefix with projects', () => {
    expect(upstreamFor('/api/projects/p1/deployments')).toBe('projects');
  });
});
