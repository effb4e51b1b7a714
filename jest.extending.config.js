// Extending tier: copies of the project changed the way docs/extending.md says (test/extending/), then
// type-checked, built and run. Not part of `npm test`; run with `npm run test:extending`.
import base from './jest.config.js';

export default {
  ...base,
  testMatch: ['<rootDir>/test/extending/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  maxWorkers: 1,
  testTimeout: 600000,
};
