// `pnpm bench <name> [options]`: runs one benchmark. Each is a module of this folder whose first
// comment says what it measures and which options it takes; README.md's table of commands lists
// them, docs/benchmarks.md their figures.

type Benchmark = { run: (args: readonly string[]) => Promise<void> };

const BENCHMARKS: Record<string, () => Promise<Benchmark>> = {
  day: () => import('./day.js'),
  'deep-pages': () => import('./deep-pages.js'),
  import: () => import('./import.js'),
  'list-cost': () => import('./list-cost.js'),
  shapes: () => import('./shapes.js'),
  soak: () => import('./soak.js'),
  tenants: () => import('./tenants.js'),
  webhooks: () => import('./webhooks.js'),
};

const [name, ...args] = process.argv.slice(2);
const benchmark = name === undefined ? undefined : BENCHMARKS[name];
if (!benchmark) {
  console.error(`usage: pnpm bench <${Object.keys(BENCHMARKS).join('|')}> [options]`);
  process.exit(2);
}
await (await benchmark()).run(args);
