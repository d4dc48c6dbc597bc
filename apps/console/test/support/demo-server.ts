// The quick start's demo, for the console's end-to-end tests: a fresh SQLite database with the
// demo organization (`agentline demo`, with 2,000 events: what the pages show and do is the same
// as with the quick start's 100,000, whose generation took a fifth of the file's time), a
// read-only key beside its admin key, and the real server (bundled as it is deployed, by the
// server's test support: under tsx each of the file's six processes compiled the sources again)
// on a fixed port of 127.0.0.1, so that it can be stopped and started again where the open page
// expects it.

import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { serverBuild } from '../../../server/test/support/server-build.js';
import { entryArgs } from '../../../server/test/support/server-process.js';

const SERVER_DIR = fileURLToPath(new URL('../../../server/', import.meta.url));

export interface DemoServer {
  baseUrl: string;
  adminKey: string;
  /** A key whose role may read everything and change nothing. */
  readOnlyKey: string;
  readOnlyKeyName: string;
  restart(): Promise<void>;
  close(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function cli(databaseUrl: string, args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [...entryArgs('cli/main', await serverBuild()), ...args],
    { cwd: SERVER_DIR, env: { ...process.env, DATABASE_URL: databaseUrl } },
  );
  return stdout;
}

async function startServer(databaseUrl: string, port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, entryArgs('main', await serverBuild()), {
    cwd: SERVER_DIR,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      HOST: '127.0.0.1',
      PORT: String(port),
      // The tests' webhook receiver listens on 127.0.0.1 over plain HTTP.
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('listening')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`the server exited with ${code}: ${stderr}`)));
  });
}

function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

export async function startDemoServer(): Promise<DemoServer> {
  const directory = mkdtempSync(join(tmpdir(), 'agentline-console-'));
  const databaseUrl = join(directory, 'agentline.db');
  await cli(databaseUrl, ['migrate']);
  const demo = await cli(databaseUrl, ['demo', '--events', '2000']);
  const adminKey = /^(agl_\S+)$/m.exec(demo)?.[1];
  if (!adminKey) throw new Error(`agentline demo printed no key: ${demo}`);
  const org = 'Demo Org';
  const readOnlyKeyName = 'read-only console test';
  await cli(databaseUrl, [
    'role',
    'create',
    '--org',
    org,
    '--name',
    'viewer',
    '--permissions',
    'EVENTS_READ,PROMPTS_READ,CHANNELS_READ,WEBHOOKS_READ',
  ]);
  const readOnlyKey = (
    await cli(databaseUrl, [
      'key',
      'create',
      '--org',
      org,
      '--role',
      'viewer',
      '--name',
      readOnlyKeyName,
    ])
  ).trim();
  const port = await freePort();
  let child = await startServer(databaseUrl, port);
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    adminKey,
    readOnlyKey,
    readOnlyKeyName,
    restart: async () => {
      await stopServer(child);
      child = await startServer(databaseUrl, port);
    },
    close: async () => {
      await stopServer(child);
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
