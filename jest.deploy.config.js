// Deploy tier: the Dockerfile (linted, read, then built without Docker and run with its own command),
// compose.yaml and the Kubernetes manifests (see test/deploy/). Not part of `npm test`; run with
// `npm run test:deploy`, with DATABASE_URL pointing at a PostgreSQL server to run the image against it.
import base from './jest.config.js';

export default {
  ...base,
  testMatch: ['<rootDir>/test/deploy/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  globalSetup: undefined,
  globalTeardown: undefined,
  maxWorkers: 1,
  testTimeout: 120000,
};
