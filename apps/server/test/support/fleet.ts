// HAProxy, with the configuration operators deploy (deploy/haproxy.cfg), in front of server
// processes (startServerProcess) on one database, all on free ports of 127.0.0.1: for tests of
// what holds across a fleet, and of a rolling restart as scripts/fleet.sh does it; and for the
// day benchmark's fleet (tools/bench/day-servers.ts).

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  startServerProcess,
  type ServerProcess,
  type ServerProcessOptions,
} from './server-process.js';

const CONFIG = new URL('../../../../deploy/haproxy.cfg', import.meta.url);
const BACKEND = 'agentline';

/** Whether `haproxy` is on the PATH: the fleet's tests are skipped without it. */
export const haproxyInstalled = spawnSync('haproxy', ['-v']).error === undefined;

export interface Fleet {
  /** HAProxy's address: where clients send their requests. */
  baseUrl: string;
  /** The server processes, s1 first; a restarted one is replaced by its successor. */
  servers: ServerProcess[];
  /** HAProxy's process id, for what it costs in CPU. */
  haproxyPid: number;
  /** What HAProxy has written so far: each server it saw go down or up, and why. */
  haproxyLog(): string;
  /** One line of HAProxy's `show stat` for server s<n> (1-based): scur, status, ... */
  serverStat(n: number): Promise<Record<string, string>>;
  /**
   * Restarts every process one at a time: drained in HAProxy, its connections waited for up to
   * `drainMs`, SIGTERM, started again on its port, made ready, then waited for until HAProxy's
   * health checks see it up. Resolves with each old process's exit code.
   */
  rollingRestart(drainMs: number): Promise<Array<number | null>>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The operators' configuration with one `server` line per process, in place of its own. */
function configFor(processes: number): string {
  const lines = readFileSync(CONFIG, 'utf8').split('\n');
  const isServer = (line: string) => /^\s+server s\d+ /.test(line);
  const first = lines.findIndex(isServer);
  const servers = Array.from(
    { length: processes },
    (_, i) => `    server s${i + 1} "\${AGENTLINE_SERVER_${i + 1}}"`,
  );
  return [...lines.slice(0, first), ...servers, ...lines.slice(first).filter((l) => !isServer(l))]
    .join('\n')
    .concat('\n');
}

/** One command to HAProxy's runtime API; its answer. */
function runtimeApi(socket: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let answer = '';
    const connection = createConnection(socket, () => connection.end(`${command}\n`));
    connection.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    connection.on('end', () => resolve(answer));
    connection.on('error', reject);
  });
}

async function until(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = performance.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (performance.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * `processes` servers with `env` (DATABASE_URL, ...) and `serverOptions` behind HAProxy, every
 * one up in it.
 */
export async function startFleet(
  env: Record<string, string>,
  { processes, serverOptions }: { processes: number; serverOptions?: ServerProcessOptions },
): Promise<Fleet> {
  const dir = mkdtempSync(join(tmpdir(), 'agentline-fleet-'));
  const socket = join(dir, 'haproxy.sock');
  const configFile = join(dir, 'haproxy.cfg');
  writeFileSync(configFile, configFor(processes));
  // HAProxy connects from 127.0.0.1, and appends the client's address to X-Forwarded-For.
  const serverEnv = { ...env, TRUSTED_PROXIES: '127.0.0.1' };
  const servers = await Promise.all(
    Array.from({ length: processes }, () => startServerProcess(serverEnv, serverOptions)),
  );
  const ports = servers.map((server) => new URL(server.baseUrl).port);
  const listenPort = await freePort();
  let haproxyOutput = '';
  const haproxy: ChildProcess = spawn('haproxy', ['-db', '-f', configFile], {
    env: {
      ...process.env,
      AGENTLINE_LISTEN: `127.0.0.1:${listenPort}`,
      AGENTLINE_HAPROXY_SOCKET: socket,
      ...Object.fromEntries(
        ports.map((port, i) => [`AGENTLINE_SERVER_${i + 1}`, `127.0.0.1:${port}`]),
      ),
    },
  });
  haproxy.stdout!.on('data', (chunk: Buffer) => (haproxyOutput += chunk.toString()));
  haproxy.stderr!.on('data', (chunk: Buffer) => (haproxyOutput += chunk.toString()));
  const haproxyExited = new Promise<void>((resolve) => haproxy.once('exit', () => resolve()));

  const serverStat = async (n: number) => {
    const [header, ...rows] = (await runtimeApi(socket, 'show stat')).trim().split('\n');
    const columns = header!.replace(/^# /, '').split(',');
    const row = rows
      .map((line) => line.split(','))
      .find((f) => f[0] === BACKEND && f[1] === `s${n}`);
    if (!row) throw new Error(`HAProxy has no server ${BACKEND}/s${n}`);
    return Object.fromEntries(columns.map((column, i) => [column, row[i] ?? '']));
  };
  const isUp = (n: number) =>
    serverStat(n).then(
      (stat) => stat.status === 'UP',
      () => false,
    );
  const waitUntilUp = async (n: number) => {
    if (!(await until(() => isUp(n), 30_000))) {
      throw new Error(`HAProxy does not see s${n} up after 30 s: ${haproxyOutput}`);
    }
  };
  const stop = async () => {
    await Promise.all(servers.map((server) => server.stop()));
    haproxy.kill('SIGTERM');
    await haproxyExited;
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let n = 1; n <= processes; n += 1) await waitUntilUp(n);
  } catch (error) {
    await stop();
    throw error;
  }

  return {
    baseUrl: `http://127.0.0.1:${listenPort}`,
    servers,
    haproxyPid: haproxy.pid!,
    haproxyLog: () => haproxyOutput,
    serverStat,
    async rollingRestart(drainMs) {
      const exitCodes: Array<number | null> = [];
      for (let i = 0; i < servers.length; i += 1) {
        const name = `${BACKEND}/s${i + 1}`;
        await runtimeApi(socket, `set server ${name} state drain`);
        await until(async () => (await serverStat(i + 1)).scur === '0', drainMs);
        exitCodes.push(await servers[i]!.stop('SIGTERM'));
        servers[i] = await startServerProcess({ ...serverEnv, PORT: ports[i]! }, serverOptions);
        await runtimeApi(socket, `set server ${name} state ready`);
        await waitUntilUp(i + 1);
      }
      return exitCodes;
    },
    stop,
  };
}
