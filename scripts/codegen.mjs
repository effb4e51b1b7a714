// Generates src/graphql/graphql.schema.ts (TypeScript typings) from schema.graphql.
// `--check` fails when the committed typings are not what the schema generates.
import { GraphQLDefinitionsFactory } from '@nestjs/graphql';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const target = join(root, 'src/graphql/graphql.schema.ts');
const check = process.argv.includes('--check');
const scratch = check ? mkdtempSync(join(tmpdir(), 'agora-codegen-')) : undefined;
const output = check ? join(scratch, 'graphql.schema.ts') : target;

await new GraphQLDefinitionsFactory().generate({
  typePaths: [join(root, 'schema.graphql')],
  path: output,
  outputAs: 'interface',
  skipResolverArgs: true,
  defaultScalarType: 'unknown',
  customScalarTypeMapping: { DateTime: 'Date | string' },
  additionalHeader: '// Run `npm run codegen` after changing schema.graphql; CI fails when this file is stale.',
});

if (check) {
  const fresh = readFileSync(output, 'utf8');
  const committed = readFileSync(target, 'utf8');
  rmSync(scratch, { recursive: true, force: true });
  if (fresh !== committed) {
    console.error('src/graphql/graphql.schema.ts is stale: run `npm run codegen` and commit the result.');
    process.exit(1);
  }
  console.log('GraphQL typings are current.');
}
