// Jest runs the TypeScript sources as ES modules (see docs/architecture.md, "Tests").
// API tests in test/ share one embedded-database template built by the global setup.
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.test.json' }],
  },
  testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/test/**/*.test.ts'],
  testPathIgnorePatterns: [
    '/node_modules/',
    '/dist/',
    '/test/browser/',
    '/test/fault/',
    '/test/fleet/',
    '/test/pooler/',
    '/test/shutdown/',
    '/test/fuzz/',
    '/test/extending/',
    '/test/deploy/',
  ],
  globalSetup: '<rootDir>/test/support/global-setup.mjs',
  globalTeardown: '<rootDir>/test/support/global-teardown.mjs',
  testTimeout: 60000,
  maxWorkers: 2,
  // Each test file imports the whole application again into its own module registry (ES modules in VM
  // contexts), and a worker's heap keeps growing past 2 GB over a run; a worker over this much after a
  // file is replaced by a fresh one, which keeps garbage collection from slowing every later file.
  workerIdleMemoryLimit: '1200MB',
};
