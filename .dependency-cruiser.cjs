// The layers of src/ (docs/architecture.md, "Layers"), checked by `npm run lint:layers` in CI:
//   foundation  config, clock, errors, logging, database: know no feature;
//   features    auth, users, sessions, account-links, two-factor, passkeys, security-notices, account-mail, personal-tokens,
//               oauth, events, notifications, mail, jobs, housekeeping, health, shutdown, metrics, telemetry, cluster, and the
//               transports' infrastructure graphql and web (every folder of src/ that is neither foundation, edge nor
//               application): use the foundation and each other's services and models, never each other's entities;
//   edges       dashboard, legacy-api, mcp: pages, REST and MCP over the features' services;
//   application app.module, core-modules, app.factory, main, cli: wire everything; nothing imports them.
// Generated code (src/generated/: the GraphQL typings of `npm run codegen`) is apart from every feature.
//
// Besides the file rules below, scripts/layers.mjs (which runs them) checks one rule on folders:
//   no-circular-between-folders  with every file counted as its folder (src/<folder>/), the imports of
//       src/ have no cycle: two folders never depend on each other, directly or through others. Every
//       import counts, `import type` included. Not counted: the entity registry's imports
//       (src/database/entities.ts) and generated code's, which sits between the features by nature
//       (resolvers import it; it imports their parent types); its own file circles are
//       generated-code-in-no-circle.
//   no-circular-between-sub-folders  inside a folder with sub-folders (src/oauth/token/, src/oauth/clients/,
//       …), each sub-folder counted as one and each file at the folder's top (its module, its errors, its
//       capabilities) as itself: no cycle between them either.
// A cycle between folders is broken by moving the shared piece to the lower folder, or by a token or
// interface the lower folder owns and the higher one provides (`PageSessions`, `ReturnOrigins.accept`).
const FOUNDATION = '^src/(config|clock|errors|logging|database)/';
const EDGES = '^src/(dashboard|legacy-api|mcp)/';
const APPLICATION = '^src/(app\\.module|core-modules|app\\.factory|main)\\.ts$|^src/cli/';

module.exports = {
  forbidden: [
    {
      name: 'foundation-knows-no-feature',
      comment: 'config, clock, errors, logging and database are below every feature: they import none.',
      severity: 'error',
      // The entity registry is the one place TypeORM learns every feature's tables.
      from: { path: FOUNDATION, pathNot: '^src/database/entities\\.ts$' },
      to: { path: '^src/', pathNot: FOUNDATION },
    },
    {
      name: 'features-do-not-import-edges',
      comment: 'Pages and the REST API sit on the features; a feature never imports them.',
      severity: 'error',
      from: { path: '^src/', pathNot: [EDGES, APPLICATION, '^src/database/entities\\.ts$'] },
      to: { path: EDGES },
    },
    {
      name: 'nothing-imports-the-application',
      comment: 'app.module, app.factory, main and the CLI wire the service together; nothing below imports them.',
      severity: 'error',
      from: { path: '^src/', pathNot: APPLICATION },
      to: { path: APPLICATION },
    },
    {
      name: 'entities-stay-in-their-feature',
      comment:
        "A feature's entities are its internals: other features use its services and models. Entities may name each other (foreign keys).",
      severity: 'error',
      from: { path: '^src/([^/]+)/', pathNot: ['\\.entity\\.ts$', '^src/database/entities\\.ts$', '\\.spec\\.ts$'] },
      to: { path: '\\.entity\\.ts$', pathNot: '^src/$1/' },
    },
    {
      name: 'no-circular-between-files',
      comment: 'Import cycles make initialisation order fragile (ESM); circles of `import type` alone are refused too.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'generated-code-in-no-circle',
      comment:
        'The generated typings import the parent types the features give them (scripts/codegen.mjs, `mappers`), which import the schema types only: no circle through them, types included.',
      severity: 'error',
      from: { path: '^src/generated/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
