// The server's CPU time per request (the request-cost work's measure of a request's fixed cost):
// `pnpm bench:cpu [--requests 30000] [--rounds 4] [--connections 16] [--path /healthz ...]
// [--checkout DIR ...] [--routing] [--database postgres://...] [--organizations 1]`. With
// --organizations N, the paths' requests take turns among N organizations, each with its key (the
// demo's, and N - 1 made empty beside it): kept answers shared within one organization, as one
// dashboard polling is the best case of, are then shared among fewer. With --routing, also session
// routing on the demo's experiment (started if it is a draft), keyed (a new Idempotency-Key each,
// as the SDK sends) and unkeyed. With --database, the demo is made in a new database on that
// PostgreSQL server (dropped at the end), and PostgreSQL's processes' CPU time counts with the
// server's: the work a request costs, wherever it runs.
// On a shared virtual machine a request rate swings with the neighbours (bare Hono ranged from
// 15,800 to 37,500 req/s within one run), while the CPU time a server spends per request barely
// does, so this compares servers by that: each one pinned to CPU 1, the load generator (this
// process) to CPU 0, a fixed number of requests, the server's user + system time (all its threads)
// read from /proc before and after. The minimum over the rounds is the figure (a slow round is the
// machine, never a faster server). Every `--checkout` (default: this one; another, for a before
// and after, is a `git worktree` with its dependencies installed) runs its own server, from its
// own bundle (or under tsx, for a checkout older than apps/server/bundle.ts), on one demo
// database (`agentline demo`: 100,000 events), beside bare Hono answering the default events
// page's bytes, all in turn within each round.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startServerProcess } from '../../apps/server/test/support/server-process.js';
import { startBareBodyServer } from './bare-server.js';
import { createClient, type AgentlineClient } from '../../packages/sdk/src/index.js';
import { benchTenant, routingRequest } from './bench-tenant.js';
import { load } from './load.js';
import { createBenchDatabase } from './bench-database.js';
import { postmasterPid, processSeconds, processTreeSeconds } from './cpu-accounting.js';
import { createDb, isPostgresUrl } from '../../apps/server/src/db/engine/client.js';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '30000' },
    rounds: { type: 'string', default: '4' },
    connections: { type: 'string', default: '16' },
    path: { type: 'string', multiple: true, default: ['/healthz', '/api/v1/events/?limit=0'] },
    checkout: { type: 'string', multiple: true },
    routing: { type: 'boolean', default: false },
    database: { type: 'string' },
    organizations: { type: 'string', default: '1' },
  },
});
const requests = Number(values.requests);
const rounds = Number(values.rounds);
const connections = Number(values.connections);
const organizations = Number(values.organizations);
for (const [name, value] of Object.entries({ requests, rounds, connections, organizations })) {
  if (!Number.isInteger(value) || value < 1)
    throw new Error(`--${name} takes a whole number, 1 or more`);
}
const REPO_DIR = fileURLToPath(new URL('../..', import.meta.url));
const checkouts = values.checkout ?? [REPO_DIR];
const SERVER_CPU = 1;

const taskset = spawnSync('taskset', ['--all-tasks', '--cpu-list', '-p', '0', String(process.pid)]);
if (taskset.status !== 0) {
  throw new Error(
    'taskset (util-linux) is needed to pin the servers and the load: apt-get install -y util-linux',
  );
}
function commitOf(directory: string): string {
  const head = spawnSync('git', ['-C', directory, 'rev-parse', '--short', 'HEAD'], {
    encoding: 'utf8',
  });
  const dirty = spawnSync(
    'git',
    ['-C', directory, 'status', '--porcelain', '--untracked-files=no'],
    {
      encoding: 'utf8',
    },
  ).stdout.trim();
  return `${head.stdout.trim()}${dirty ? '+changes' : ''}`;
}

/** The sessions path of the demo experiment's target, started through the SDK if a draft. */
async function runningExperimentTarget(client: AgentlineClient): Promise<string> {
  const [experiment] = (await client.experiments.list({ limit: 1 })).items;
  if (!experiment) throw new Error('the demo database has no experiment to route with');
  if (experiment.status === 'draft') await client.experiments.start(experiment.id);
  return `/api/v1/channels/targets/${experiment.target_id}/sessions`;
}

const directory = mkdtempSync(join(tmpdir(), 'agentline-bench-cpu-'));
const database = await createBenchDatabase(directory, values.database, 'cpu');
const databaseUrl = database.url;
/** The CPU time a request costs beyond the server's own: PostgreSQL's, when it is the database. */
const postmaster = isPostgresUrl(databaseUrl) ? await postmasterPid(databaseUrl) : undefined;
const databaseSeconds = () => (postmaster === undefined ? 0 : processTreeSeconds(postmaster));
try {
  console.log('making the demo database (agentline demo)...');
  const demo = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'demo'], {
    cwd: join(REPO_DIR, 'apps/server'),
    env: { ...process.env, DATABASE_URL: databaseUrl },
    encoding: 'utf8',
  });
  const key = /agl_[A-Za-z0-9_]+/.exec(demo.stdout)?.[0];
  if (demo.status !== 0 || !key) throw new Error(`agentline demo failed: ${demo.stderr}`);
  const headers = { 'Service-API-Key': key };
  const keys = [key];
  if (organizations > 1) {
    const db = createDb(databaseUrl);
    for (let index = 1; index < organizations; index += 1) {
      keys.push((await benchTenant(db, `Bench ${index}`)).key);
    }
    await db.close();
  }
  /** The n-th request of a path's run names the organizations in turn. */
  const headersOf = (n: number) => ({ 'Service-API-Key': keys[n % keys.length]! });

  const servers: Array<{ label: string; pid: number; baseUrl: string; stop: () => unknown }> = [];
  const commits = checkouts.map(commitOf);
  for (const [index, checkout] of checkouts.entries()) {
    const server = await startServerProcess(
      { DATABASE_URL: databaseUrl },
      { keepOutput: false, serverDir: join(checkout, 'apps/server'), cpu: SERVER_CPU },
    );
    servers.push({
      // Checkouts of one commit (variants of an ablation) are told apart by their directory.
      label:
        commits.indexOf(commits[index]!) === commits.lastIndexOf(commits[index]!)
          ? commits[index]!
          : `${commits[index]} (${basename(resolve(checkout))})`,
      pid: server.child.pid!,
      baseUrl: server.baseUrl,
      stop: () => server.stop(),
    });
  }
  const page = await fetch(`${servers[0]!.baseUrl}/api/v1/events/`, { headers });
  if (!page.ok) throw new Error(`the default events page answered ${page.status}`);
  const body = await page.text();
  const bare = await startBareBodyServer(directory, body, SERVER_CPU);

  const routingPath = values.routing
    ? await runningExperimentTarget(createClient({ apiKey: key, baseUrl: servers[0]!.baseUrl }))
    : null;
  const routingLabel = (server: string, keyed: boolean) =>
    `${server} POST ${routingPath}, ${keyed ? 'keyed' : 'unkeyed'}`;
  const runs: Array<{ label: string; url: string; pid: number; keyed?: boolean }> = [
    ...servers.flatMap((server) => [
      ...values.path.map((path) => ({
        label: `${server.label} ${path}`,
        url: `${server.baseUrl}${path}`,
        pid: server.pid,
      })),
      ...(routingPath === null
        ? []
        : [true, false].map((keyed) => ({
            label: routingLabel(server.label, keyed),
            url: `${server.baseUrl}${routingPath}`,
            pid: server.pid,
            keyed,
          }))),
    ]),
    { label: `bare Hono, the page's ${body.length} bytes`, url: bare.url, pid: bare.pid },
  ];
  /** Each run's server CPU µs per request, a figure per round. */
  const measured = new Map<string, number[]>();
  try {
    for (let round = 1; round <= rounds; round += 1) {
      for (const run of runs) {
        const request = run.keyed === undefined ? { headersOf } : routingRequest(key, run.keyed);
        const shape = { url: run.url, connections, seconds: 60, ...request };
        await load({ ...shape, maxRequests: Math.ceil(requests / 5) });
        const seconds = () => processSeconds(run.pid) + databaseSeconds();
        const before = seconds();
        const result = await load({ ...shape, maxRequests: requests });
        const microseconds = ((seconds() - before) / result.requests) * 1e6;
        if (result.non2xx + result.errors > 0) {
          throw new Error(
            `${run.label}: ${result.non2xx} answers not 2xx and ${result.errors} errors`,
          );
        }
        console.log(`round ${round}: ${run.label}: ${microseconds.toFixed(1)} µs per request`);
        measured.set(run.label, [...(measured.get(run.label) ?? []), microseconds]);
      }
    }
  } finally {
    bare.stop();
    await Promise.all(servers.map((server) => server.stop()));
  }

  const minimumOf = (label: string) => Math.min(...measured.get(label)!);
  const bareMinimum = minimumOf(runs.at(-1)!.label);
  console.log(
    `\n${requests} requests per round at ${connections} connections${organizations > 1 ? ` of ${organizations} organizations in turn` : ''}, ${rounds} rounds; server CPU µs per request${isPostgresUrl(databaseUrl) ? ", PostgreSQL's included" : ''}`,
  );
  console.log(
    `${'request'.padEnd(72)} ${'min'.padStart(7)} ${'median'.padStart(7)} ${'bare / min'.padStart(10)}`,
  );
  for (const run of runs) {
    const sorted = [...measured.get(run.label)!].sort((a, b) => a - b);
    const minimum = sorted[0]!;
    const median = sorted[Math.floor(sorted.length / 2)]!;
    console.log(
      `${run.label.padEnd(72)} ${minimum.toFixed(1).padStart(7)} ${median.toFixed(1).padStart(7)} ${(bareMinimum / minimum).toFixed(2).padStart(10)}`,
    );
  }
  if (routingPath !== null) {
    for (const server of servers) {
      // Requests per CPU second, keyed against unkeyed: the ratio the request-cost work set for rates.
      const ratio =
        minimumOf(routingLabel(server.label, false)) / minimumOf(routingLabel(server.label, true));
      console.log(
        `${server.label}: routing keyed / unkeyed, by CPU per request: ${ratio.toFixed(2)}`,
      );
    }
  }
} finally {
  await database.drop();
  rmSync(directory, { recursive: true, force: true });
}
