// Shutdown tier: real server processes under load, stopped with SIGTERM (see test/shutdown/). Not part
// of `npm test`; run with `npm run test:shutdown`, one file at a time so the load is the server's own.
import base from './jest.config.js';

export default {
  ...base,
  testMatch: ['<rootDir>/test/shutdown/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  maxWorkers: 1,
  testTimeout: 120000,
};
