// The real server as a separate process (`src/main.ts`, bundled or under tsx) on an ephemeral port of
// 127.0.0.1: for tests that need several processes on one database or a real signal, and for the
// repo's scripts (benchmarks, the SDK consumer check), whose load generator would otherwise share
// the server's event loop.

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serverBuild, testRunBuild } from './server-build.js';

const SERVER_DIR = fileURLToPath(new URL('../..', import.meta.url));

export interface ServerProcess {
  baseUrl: string;
  child: ChildProcessWithoutNullStreams;
  /** The lines the process wrote to stdout (JSON log lines), when asked to keep them. */
  output: string[];
  /** Resident set size of the process in MiB, read from /proc. */
  rssMiB(): number;
  /** Sends a signal and resolves with the exit code once the process has exited. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * `node` with `args`, or with `cpu`, the same pinned to that CPU with taskset (which execs node, so
 * the child's pid is node's): for benchmarks that read a process's CPU time from /proc.
 */
export function nodeCommand(args: string[], cpu?: number): [string, string[]] {
  return cpu === undefined
    ? [process.execPath, args]
    : ['taskset', ['--cpu-list', String(cpu), process.execPath, ...args]];
}

/**
 * Node's arguments to run one of the server's entry modules (`main`, `cli/main`) from `build`
 * (test/support/server-build.ts; by default the test run's), as production runs it; without one,
 * the sources under tsx as `pnpm start` runs them. Run in the server's folder.
 */
export function entryArgs(
  entry: 'main' | 'cli/main',
  build: string | null | undefined = testRunBuild(),
): string[] {
  return build ? [join(build, `${entry}.js`)] : ['--import', 'tsx', `src/${entry}.ts`];
}

export interface ServerProcessOptions {
  /** Keep the stdout lines in `output` (default); otherwise they are drained unread. */
  keepOutput?: boolean;
  /** The apps/server directory to run, another checkout's for a before/after; default this one. */
  serverDir?: string;
  /** Pins the process to this CPU (nodeCommand). */
  cpu?: number;
}

export async function startServerProcess(
  env: Record<string, string>,
  { keepOutput = true, serverDir = SERVER_DIR, cpu }: ServerProcessOptions = {},
): Promise<ServerProcess> {
  const [command, args] = nodeCommand(entryArgs('main', await serverBuild(serverDir)), cpu);
  const child = spawn(command, args, {
    cwd: serverDir,
    // Tests and benchmarks drive many requests through one key, standing for many clients: the
    // per-key caps on requests in progress and on list reads at once are off, and the per-key
    // rate limit is at its highest (it still counts every request, as it does by default),
    // unless the caller sets them.
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'info',
      CONCURRENT_REQUESTS_PER_KEY: '0',
      CONCURRENT_LIST_READS_PER_KEY: '0',
      RATE_LIMIT_PER_MINUTE: '100000000',
      ...env,
    },
  });
  const output: string[] = [];
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  const baseUrl = await new Promise<string>((resolve, reject) => {
    let buffered = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // Always drained: a full pipe would block the server's logging.
    const read = (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        if (keepOutput) output.push(line);
        const port = /"port":(\d+)/.exec(line);
        if (port && line.includes('listening')) {
          resolve(`http://127.0.0.1:${port[1]}`);
          // Lines not kept are drained unread from here on: a benchmark's load generator runs in
          // this process, and splitting every access line would take its time.
          if (!keepOutput) {
            child.stdout.off('data', read);
            child.stdout.resume();
          }
        }
      }
    };
    child.stdout.on('data', read);
    void exited.then((code) =>
      reject(new Error(`server exited with ${code} before listening: ${stderr}`)),
    );
  });
  return {
    baseUrl,
    child,
    output,
    rssMiB: () => {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN) / 1024;
    },
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}
