// `npm run lint:layers`: the import rules of src/ (docs/architecture.md, "Layers"). One dependency-cruiser
// run checks the file rules of .dependency-cruiser.cjs and reports them as `depcruise` does; the same
// graph, with each file counted as its folder (src/<folder>/), must then have no cycle between folders
// ("no-circular-between-folders" in .dependency-cruiser.cjs), which no file rule can see: auth → metrics
// → auth through two different pairs of files is no file circle. Every import counts, `import type`
// included (a folder that names another's types depends on it as surely), but neither the entity
// registry's (src/database/entities.ts, the one place TypeORM learns every feature's tables) nor generated
// code's (src/generated/: the schema's types, which resolvers import and which import the features' parent
// types; its own file circles are a file rule).
import { cruise, format } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

const FOLDER = /^src\/([^/]+)\//;
const UNCOUNTED = /^src\/database\/entities\.ts$|^src\/generated\//;

const options = await extractDepcruiseOptions('./.dependency-cruiser.cjs');
const { output: result } = await cruise(['src'], options, undefined, { tsConfig: extractTSConfig(options.tsConfig.fileName) });
const files = await format(result, { outputType: 'err' });
process.stdout.write(files.output);

/** folder → folder → the imports that make the edge, as `from -> to`. */
const edges = new Map();
for (const module of result.modules) {
  const from = FOLDER.exec(module.source)?.[1];
  if (!from || UNCOUNTED.test(module.source)) continue;
  for (const dependency of module.dependencies) {
    const to = FOLDER.exec(dependency.resolved)?.[1];
    if (!to || to === from || UNCOUNTED.test(dependency.resolved)) continue;
    if (!edges.has(from)) edges.set(from, new Map());
    const imports = edges.get(from).get(to) ?? [];
    imports.push(`${module.source} -> ${dependency.resolved}`);
    edges.get(from).set(to, imports);
  }
}

// Tarjan's strongly connected components: each of more than one folder holds a cycle.
const cycles = [];
const index = new Map();
const low = new Map();
const stack = [];
const onStack = new Set();
const visit = (folder) => {
  index.set(folder, index.size);
  low.set(folder, index.get(folder));
  stack.push(folder);
  onStack.add(folder);
  for (const next of edges.get(folder)?.keys() ?? []) {
    if (!index.has(next)) {
      visit(next);
      low.set(folder, Math.min(low.get(folder), low.get(next)));
    } else if (onStack.has(next)) low.set(folder, Math.min(low.get(folder), index.get(next)));
  }
  if (low.get(folder) !== index.get(folder)) return;
  const component = [];
  let member;
  do {
    member = stack.pop();
    onStack.delete(member);
    component.push(member);
  } while (member !== folder);
  if (component.length > 1) cycles.push(component.sort());
};
for (const folder of edges.keys()) if (!index.has(folder)) visit(folder);

for (const cycle of cycles) {
  console.log(`  error no-circular-between-folders: ${cycle.join(', ')} depend on each other`);
  for (const from of cycle) {
    for (const [to, imports] of edges.get(from) ?? []) {
      if (!cycle.includes(to)) continue;
      console.log(
        `    src/${from}/ -> src/${to}/: ${imports.slice(0, 3).join(', ')}${imports.length > 3 ? `, and ${imports.length - 3} more` : ''}`,
      );
    }
  }
}
if (cycles.length > 0) console.log(`\n✘ ${cycles.length} cycle(s) between the folders of src/\n`);
process.exit(files.exitCode || (cycles.length > 0 ? 1 : 0));
