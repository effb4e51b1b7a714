// The fault tier (test/fault/): the built server process against a PostgreSQL server that the test
// stops and starts (.ci/run provides a throwaway cluster; see test/fault/postgres-outage.test.ts).
import base from './jest.config.js';

export default {
  ...base,
  testMatch: ['<rootDir>/test/fault/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  globalSetup: undefined,
  globalTeardown: undefined,
  maxWorkers: 1,
  testTimeout: 180000,
};
