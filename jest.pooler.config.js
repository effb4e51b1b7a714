// The pooler tier (test/pooler/): built server processes behind PgBouncers the tests start themselves, in
// transaction, session and statement mode, in front of one PostgreSQL server (.ci/run provides a
// throwaway cluster, POOLER_DATABASE_URL, and installs PgBouncer; see test/pooler/pooler.ts).
import base from './jest.config.js';

export default {
  ...base,
  testMatch: ['<rootDir>/test/pooler/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  globalSetup: undefined,
  globalTeardown: undefined,
  maxWorkers: 1,
  testTimeout: 180000,
};
