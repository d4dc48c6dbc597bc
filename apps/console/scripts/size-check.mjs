// The console's budget: everything the browser downloads for it, gzipped, under 200 kB. Run after
// `vite build` (the build and test scripts do); prints each file and the total.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';

const BUDGET_BYTES = 200 * 1000;
const dist = new URL('../dist/', import.meta.url).pathname;

function files(directory) {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}

let total = 0;
for (const path of files(dist)) {
  const gzipped = gzipSync(readFileSync(path), { level: 9 }).length;
  total += gzipped;
  console.log(`${(gzipped / 1000).toFixed(1).padStart(7)} kB  ${relative(dist, path)}`);
}
console.log(
  `${(total / 1000).toFixed(1).padStart(7)} kB  in all, gzipped (budget ${BUDGET_BYTES / 1000} kB)`,
);
if (total > BUDGET_BYTES) {
  console.error(
    `console: ${(total / 1000).toFixed(1)} kB gzipped is over the ${BUDGET_BYTES / 1000} kB budget`,
  );
  process.exit(1);
}
