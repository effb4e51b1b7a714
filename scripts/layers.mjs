// `npm run lint:layers`: the import rules of src/ (docs/architecture.md, "Layers"). One dependency-cruiser
// run checks the file rules of .dependency-cruiser.cjs and reports them as `depcruise` does; the same
// graph, with each file counted as its folder (src/<folder>/), must then have no cycle between folders
// ("no-circular-between-folders" in .dependency-cruiser.cjs), which no file rule can see: auth → metrics
// → auth through two different pairs of files is no file circle. Every import counts, `import type`
// included (a folder that names another's types depends on it as surely), but neither the entity
// registry's (src/database/entities.ts, the one place TypeORM learns every feature's tables) nor generated
// code's (src/generated/: the schema's types, which resolvers import and which import the features' parent
// types; its own file circles are a file rule). Likewise inside a folder with sub-folders (src/oauth/):
// each sub-folder counted as one, each file at the folder's top as itself ("no-circular-between-sub-folders").
import { cruise, format } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

const FOLDER = /^src\/([^/]+)\//;
const UNCOUNTED = /^src\/database\/entities\.ts$|^src\/generated\//;

const options = await extractDepcruiseOptions('./.dependency-cruiser.cjs');
const { output: result } = await cruise(['src'], options, undefined, { tsConfig: extractTSConfig(options.tsConfig.fileName) });
const files = await format(result, { outputType: 'err' });
process.stdout.write(files.output);

/**
 * The graph of `nodeOf` (a node per file, or null for a file not counted): node → node → the imports that
 * make the edge, as `from -> to`.
 */
function graphOf(nodeOf) {
  const edges = new Map();
  for (const module of result.modules) {
    const from = nodeOf(module.source);
    if (!from || UNCOUNTED.test(module.source)) continue;
    for (const dependency of module.dependencies) {
      const to = nodeOf(dependency.resolved);
      if (!to || to === from || UNCOUNTED.test(dependency.resolved)) continue;
      if (!edges.has(from)) edges.set(from, new Map());
      const imports = edges.get(from).get(to) ?? [];
      imports.push(`${module.source} -> ${dependency.resolved}`);
      edges.get(from).set(to, imports);
    }
  }
  return edges;
}

/** Tarjan's strongly connected components: each of more than one node holds a cycle. */
function cyclesOf(edges) {
  const cycles = [];
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const visit = (node) => {
    index.set(node, index.size);
    low.set(node, index.get(node));
    stack.push(node);
    onStack.add(node);
    for (const next of edges.get(node)?.keys() ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node), low.get(next)));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node), index.get(next)));
    }
    if (low.get(node) !== index.get(node)) return;
    const component = [];
    let member;
    do {
      member = stack.pop();
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1) cycles.push(component.sort());
  };
  for (const node of edges.keys()) if (!index.has(node)) visit(node);
  return cycles;
}

/** Prints each cycle with up to three imports of each of its edges; how many there were. */
function report(rule, edges, cycles, name) {
  for (const cycle of cycles) {
    console.log(`  error ${rule}: ${cycle.map(name).join(', ')} depend on each other`);
    for (const from of cycle) {
      for (const [to, imports] of edges.get(from) ?? []) {
        if (!cycle.includes(to)) continue;
        console.log(
          `    ${name(from)} -> ${name(to)}: ${imports.slice(0, 3).join(', ')}${imports.length > 3 ? `, and ${imports.length - 3} more` : ''}`,
        );
      }
    }
  }
  return cycles.length;
}

// Between the folders of src/: each file counted as its folder (src/<folder>/).
const folders = graphOf((path) => FOLDER.exec(path)?.[1] ?? null);
// Inside a folder that has sub-folders (src/oauth/token/, src/oauth/clients/, …): each file of a sub-folder
// counted as that sub-folder, each file at the folder's top (its module, its errors) as itself, and only
// the imports within the folder. The module file imports every sub-folder and the sub-folders import the
// shared files at the top, which is no cycle as long as those shared files import no sub-folder.
const SUB = /^src\/([^/]+)\/(?:([^/]+)\/)?/;
const inside = graphOf((path) => {
  const match = SUB.exec(path);
  if (!match) return null;
  return match[2] ? `${match[1]}/${match[2]}/` : path.slice('src/'.length);
});
for (const [from, targets] of inside) for (const to of targets.keys()) if (from.split('/')[0] !== to.split('/')[0]) targets.delete(to);

const cycles =
  report('no-circular-between-folders', folders, cyclesOf(folders), (folder) => `src/${folder}/`) +
  report('no-circular-between-sub-folders', inside, cyclesOf(inside), (node) => `src/${node}`);
if (cycles > 0) console.log(`\n✘ ${cycles} cycle(s) between the folders of src/\n`);
process.exit(files.exitCode || (cycles > 0 ? 1 : 0));
