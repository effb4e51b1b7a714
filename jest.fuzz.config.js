// The fuzz tier (npm run test:fuzz, test/fuzz/): property-based tests that send generated bad input
// to every surface and assert no 5xx and each transport's error shape. FUZZ_RUNS and FUZZ_SEED size
// and replay a run; the global setup prints both.
import base from './jest.config.js';

export default {
  ...base,
  testMatch: ['<rootDir>/test/fuzz/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  globalSetup: '<rootDir>/test/fuzz/global-setup.mjs',
  testTimeout: 600000,
};
