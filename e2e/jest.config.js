const path = require('node:path');
const preset = require('../jest.preset.js');

/**
 * The end-to-end suite drives a whole stack through the gateway. With E2E_BASE_URL set it uses
 * that stack (e.g. `docker compose up`); otherwise its global setup starts one on other ports
 * with scripts/start.sh and its teardown stops it.
 * @type {import('jest').Config}
 */
module.exports = {
  ...preset,
  displayName: 'e2e',
  rootDir: __dirname,
  globalSetup: path.join(__dirname, 'src/support/global-setup.ts'),
  globalTeardown: path.join(__dirname, 'src/support/global-teardown.ts'),
  setupFilesAfterEnv: [path.join(__dirname, 'src/support/jest-timeout.ts')],
  testTimeout: 60_000,
};
