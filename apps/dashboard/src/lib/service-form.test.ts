import { describe, expect, it } from '@jest/globals';
import type { Schemas } from '../api/client';
import { emptySource, sourceBody, sourceFormOf, sourceProblems } from './service-form';

const withReplicas = (replicas: string) => ({ ...emptySource, name: 'web', replicas });

describe('the service form', () => {
  it.each(['1', '3', '10', ' 7 ', '+2', '004', '3.0'])(
    'takes %j replicas as they are',
    (replicas) => {
      expect(sourceProblems(withReplicas(replicas))).toEqual({});
    },
  );

  it('takes empty replicas (the default, 1) and sends them as null', () => {
    expect(sourceProblems(withReplicas(''))).toEqual({});
    expect(sourceProblems(withReplicas('   '))).toEqual({});
    expect(sourceBody(withReplicas('  ')).replicas).toBeNull();
  });

  it.each([
    ['0', 'must be at least 1'],
    ['-3', 'must be at least 1'],
    ['11', 'must be at most 10'],
    ['99999999999999999999', 'must be at most 10'],
    ['2.5', 'must be a whole number'],
    ['.5', 'must be a whole number'],
    ['Infinity', 'must be a whole number'],
    ['1e1', 'must be a whole number'],
    ['0x5', 'must be a whole number'],
    ['three', 'must be a whole number'],
    ['3 copies', 'must be a whole number'],
  ])('refuses %j replicas, in the API’s words: %s', (replicas, message) => {
    expect(sourceProblems(withReplicas(replicas))).toEqual({ replicas: message });
  });

  it('sends replicas as a number', () => {
    expect(sourceBody(withReplicas('3.0')).replicas).toBe(3);
    expect(sourceBody(withReplicas(' 3 '))).toEqual({
      name: 'web',
      repository: null,
      branch: null,
      rootDirectory: null,
      buildCommand: null,
      startCommand: null,
      healthCheckPath: null,
      replicas: 3,
      dockerfilePath: null,
    });
  });

  it('shows a service’s replicas, and sends them back unchanged', () => {
    const service = {
      id: 'a'.repeat(24),
      projectId: 'b'.repeat(24),
      name: 'web',
      createdAt: '2025-01-01T00:00:00.000Z',
      repository: 'https://example.com/web.git',
      branch: 'main',
      rootDirectory: '',
      buildCommand: null,
      startCommand: 'node server.js',
      healthCheckPath: '/',
      replicas: 4,
      dockerfilePath: 'docker/Dockerfile',
      url: null,
    } satisfies Schemas['Service'];
    const form = sourceFormOf(service);
    expect(form.replicas).toBe('4');
    expect(sourceProblems(form)).toEqual({});
    expect(sourceBody(form)).toMatchObject({
      name: 'web',
      replicas: 4,
      dockerfilePath: 'docker/Dockerfile',
    });
  });
});
