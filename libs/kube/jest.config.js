// @kubernetes/client-node 1.x and its OpenID client are ES modules only: swc turns them into
// CommonJS for jest (the compiled service loads them with Node's own require(esm)).
const preset = require('../../jest.preset.js');
const swc = preset.transform['^.+\\.ts$'];

/** @type {import('jest').Config} */
module.exports = {
  ...preset,
  displayName: 'kube',
  rootDir: __dirname,
  transform: { ...preset.transform, '^.+\\.m?js$': swc },
  transformIgnorePatterns: [
    '/node_modules/(?!(@kubernetes/client-node|openid-client|oauth4webapi|jose)/)',
  ],
};
