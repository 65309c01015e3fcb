/** A service's settings as a test sets them: every one away from its default. */
export const SAMPLE_SETTINGS = {
  repository: 'https://93.184.215.14/acme/shop.git',
  branch: 'release/2024.1',
  rootDirectory: 'apps/web',
  buildCommand: 'npm ci\nnpm run build',
  startCommand: 'node server.js',
  healthCheckPath: '/healthz?full=1',
  replicas: 3,
  dockerfilePath: 'docker/web.Dockerfile',
};

/**
 * The settings of a service created with a name only, as every answer shows them: the contract's
 * defaults for where the code runs, and no source or commands.
 */
export const ANSWERED_DEFAULTS = {
  ...{ branch: 'main', rootDirectory: '', healthCheckPath: '/', replicas: 1 },
  ...{ repository: null, buildCommand: null, startCommand: null, dockerfilePath: null },
};
