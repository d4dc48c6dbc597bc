// Prints what each entry point of the SDK costs a bundle: its ESM build with every runtime
// dependency, minified and gzipped, the way a customer's bundler would ship it. Fails when an
// entry is above its budget.
//   pnpm --filter @agentline/sdk size

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'tsup';

const ENTRIES = [
  {
    name: 'index',
    specifier: '@agentline/sdk',
    source: 'src/index.ts',
    // 7,640 bytes before the RateLimit fields' parser and the jittered Retry-After wait (8,002
    // with them), 8,040 before the nine webhook endpoint methods (8,301 with them, which no
    // saving elsewhere paid for: most of the rest is openapi-fetch and eventsource-parser). A
    // feature past this budget must pay for itself elsewhere.
    budget: 8_448,
  },
  {
    name: 'webhooks',
    specifier: '@agentline/sdk/webhooks',
    source: 'src/webhooks.ts',
    // A receiver's whole cost: verification on Web Crypto, with no dependency and no client.
    budget: 1_536,
  },
];

const outDir = mkdtempSync(join(tmpdir(), 'agentline-sdk-size-'));
try {
  await build({
    config: false,
    entry: Object.fromEntries(ENTRIES.map(({ name, source }) => [name, source])),
    format: ['esm'],
    minify: true,
    dts: false,
    silent: true,
    // Each entry measured whole, as if it were the only one a customer imports.
    splitting: false,
    outDir,
    noExternal: [/.*/],
  });
  for (const { name, specifier, budget } of ENTRIES) {
    const code = readFileSync(join(outDir, `${name}.js`));
    const gzipped = gzipSync(code, { level: 9 }).length;
    console.log(
      `${specifier} ESM entry with its dependencies: ${code.length} bytes minified, ` +
        `${gzipped} bytes min+gzip (budget ${budget})`,
    );
    if (gzipped > budget) {
      console.error(
        `${specifier} is over its budget by ${gzipped - budget} bytes: find what grew before raising it`,
      );
      process.exitCode = 1;
    }
  }
} finally {
  rmSync(outDir, { recursive: true, force: true });
}
