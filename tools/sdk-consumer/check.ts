// The SDK as a customer gets it: build it and check the package (the SDK's `check:package`:
// publint, attw, the size budget), pack it, install the tarball into a fresh project outside the
// workspace (no workspace links), then run an ES module and a CommonJS script against a real
// server on 127.0.0.1, and type-check a TypeScript file and every TypeScript example of the
// package's README.
//
//   pnpm check:sdk-consumer [--node /path/to/node ...]
//
// Each --node runs the two scripts once more on that Node.js binary (CI passes 22 and 24; the
// Node.js running this check always runs them).

import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServerProcess } from '../../apps/server/test/support/server-process.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const HERE = fileURLToPath(new URL('.', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'agentline-sdk-consumer-'));
const nodes = [
  process.execPath,
  ...process.argv.flatMap((arg, i) => (process.argv[i - 1] === '--node' ? [arg] : [])),
];

/**
 * The README's TypeScript examples, each as a module of its own. An example uses `client` and
 * `id` without declaring them (the README declares them once, in the quick start), so those are
 * declared for the examples that do not.
 */
function readmeExamples(): Map<string, string> {
  const readme = readFileSync(join(ROOT, 'packages/sdk/README.md'), 'utf8');
  const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!);
  return new Map(
    blocks.map((code, i) => {
      const imports = code.split('\n').filter((line) => line.startsWith('import '));
      const rest = code.split('\n').filter((line) => !line.startsWith('import '));
      const assumed = [
        /\bconst client\b/.test(code)
          ? ''
          : "declare const client: import('@agentline/sdk').AgentlineClient;",
        /\bconst id\b/.test(code) ? '' : 'declare const id: number;',
      ];
      return [`readme-${i + 1}.mts`, [...imports, ...assumed, 'export {};', ...rest].join('\n')];
    }),
  );
}

function run(
  command: string,
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
): string {
  console.log(`$ ${command} ${args.join(' ')}`);
  return execFileSync(command, args, {
    cwd,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

let stopServer: (() => Promise<unknown>) | undefined;
try {
  process.stdout.write(run('pnpm', ['--filter', '@agentline/sdk', 'check:package'], ROOT));
  run('pnpm', ['pack', '--pack-destination', work], join(ROOT, 'packages/sdk'));
  const tarball = readdirSync(work).find((name) => name.endsWith('.tgz'))!;

  const project = join(work, 'consumer');
  run('mkdir', ['-p', project], work);
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({ name: 'consumer', private: true }, null, 2),
  );
  run(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
      join(work, tarball),
      'typescript@5.9',
      '@types/node@20',
      // What a webhook's sender signs with, to check verifyWebhook against.
      'standardwebhooks@1',
    ],
    project,
  );
  for (const file of ['esm.mjs', 'cjs.cjs', 'typed.ts'])
    copyFileSync(join(HERE, file), join(project, file));

  const databaseUrl = join(work, 'consumer.db');
  const demo = run('pnpm', ['-s', 'agentline', 'demo', '--events', '500'], ROOT, {
    DATABASE_URL: databaseUrl,
  });
  const apiKey = /agl_[a-z0-9]{12}_[A-Za-z0-9]{32}/.exec(demo)?.[0];
  if (!apiKey) throw new Error('agentline demo printed no API key');

  // The consumers create webhook endpoints on 127.0.0.1, which only these settings allow.
  const server = await startServerProcess(
    {
      DATABASE_URL: databaseUrl,
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true',
    },
    { keepOutput: false },
  );
  stopServer = server.stop;
  const env = { AGENTLINE_API_KEY: apiKey, AGENTLINE_BASE_URL: server.baseUrl };
  for (const node of nodes) {
    console.log(run(node, ['esm.mjs'], project, env).trim());
    console.log(run(node, ['cjs.cjs'], project, env).trim());
  }
  const examples = readmeExamples();
  for (const [file, code] of examples) writeFileSync(join(project, file), code);
  run(
    join(project, 'node_modules/.bin/tsc'),
    [
      '--noEmit',
      '--strict',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--target',
      'es2022',
      '--exactOptionalPropertyTypes',
      '--types',
      'node',
      'typed.ts',
      ...examples.keys(),
    ],
    project,
  );
  console.log(
    `sdk consumer check: ESM and CommonJS on Node ${nodes.map((node) => run(node, ['-v'], ROOT).trim()).join(', ')}, TypeScript and ${examples.size} README examples all passed`,
  );
} finally {
  await stopServer?.();
  rmSync(work, { recursive: true, force: true });
}
