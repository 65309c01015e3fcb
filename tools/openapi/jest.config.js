const path = require('node:path');

/**
 * The generator imports each service's built registrations (`@platform/<service>/dist/…`) when
 * it runs as a program; its test reads their sources, so it never checks a stale build.
 * @type {import('jest').Config}
 */
module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'openapi',
  rootDir: __dirname,
  moduleNameMapper: {
    ...require('../../jest.preset.js').moduleNameMapper,
    '^@platform/(gateway|auth|projects|deployments|webhooks)/dist/(.*)$': path.join(
      __dirname,
      '../../services/$1/src/$2',
    ),
  },
};
