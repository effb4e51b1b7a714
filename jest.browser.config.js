// Browser tests: Debian's chromium driven by playwright-core (see test/browser/).
import base from './jest.config.js';

export default {
  ...base,
  testMatch: ['<rootDir>/test/browser/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  maxWorkers: 1,
  testTimeout: 120000,
};
