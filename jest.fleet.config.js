// The fleet tier (test/fleet/): three built server processes on one PostgreSQL database, started
// together on an empty one, flows whose steps go to different instances, and one server with WORKERS=2
// (.ci/run provides a throwaway cluster and FLEET_DATABASE_URL; see test/fleet/fleet.ts).
import base from './jest.config.js';

export default {
  ...base,
  testMatch: ['<rootDir>/test/fleet/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  globalSetup: undefined,
  globalTeardown: undefined,
  maxWorkers: 1,
  testTimeout: 180000,
};
