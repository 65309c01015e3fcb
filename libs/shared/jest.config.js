/** @type {import('jest').Config} */
module.exports = { ...require('../../jest.preset.js'), displayName: 'shared', rootDir: __dirname };
