/** @type {import('jest').Config} */
module.exports = { ...require('../../jest.preset.js'), displayName: 'kube', rootDir: __dirname };
