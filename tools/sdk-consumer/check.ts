// The SDK as a customer gets it: pack it, install the tarball into a fresh project outside the
// workspace (no workspace links), then run an ES module and a CommonJS script against a real
// server on 127.0.0.1, and type-check a TypeScript file. `pnpm check:sdk-consumer`.

import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServerProcess } from '../../apps/server/test/support/server-process.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const HERE = fileURLToPath(new URL('.', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'agentline-sdk-consumer-'));

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
  run('pnpm', ['--filter', '@agentline/sdk', 'build'], ROOT);
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

  const server = await startServerProcess({ DATABASE_URL: databaseUrl }, { keepOutput: false });
  stopServer = server.stop;
  const env = { AGENTLINE_API_KEY: apiKey, AGENTLINE_BASE_URL: server.baseUrl };
  console.log(run('node', ['esm.mjs'], project, env).trim());
  console.log(run('node', ['cjs.cjs'], project, env).trim());
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
      '--types',
      'node',
      'typed.ts',
    ],
    project,
  );
  console.log('sdk consumer check: ESM, CommonJS and TypeScript consumers all passed');
} finally {
  await stopServer?.();
  rmSync(work, { recursive: true, force: true });
}
