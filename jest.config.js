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
};
