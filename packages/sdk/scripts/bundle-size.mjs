// Prints what the SDK costs a bundle: the ESM entry with every runtime dependency, minified and
// gzipped, the way a customer's bundler would ship it. Fails above the budget.
//   pnpm --filter @agentline/sdk size

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'tsup';

// 7,640 bytes before the RateLimit fields' parser and the jittered Retry-After wait (8,002 with
// them): 8 KiB holds today's client; a feature past it must pay for itself elsewhere.
const BUDGET_BYTES = 8_192;

const outDir = mkdtempSync(join(tmpdir(), 'agentline-sdk-size-'));
try {
  await build({
    config: false,
    entry: { index: 'src/index.ts' },
    format: ['esm'],
    minify: true,
    dts: false,
    silent: true,
    outDir,
    noExternal: [/.*/],
  });
  const code = readFileSync(join(outDir, 'index.js'));
  const gzipped = gzipSync(code, { level: 9 }).length;
  console.log(
    `@agentline/sdk ESM entry with its dependencies: ${code.length} bytes minified, ` +
      `${gzipped} bytes min+gzip (budget ${BUDGET_BYTES})`,
  );
  if (gzipped > BUDGET_BYTES) {
    console.error(
      `over the budget by ${gzipped - BUDGET_BYTES} bytes: find what grew before raising it`,
    );
    process.exitCode = 1;
  }
} finally {
  rmSync(outDir, { recursive: true, force: true });
}
