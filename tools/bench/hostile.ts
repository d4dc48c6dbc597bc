// Hostile and careless inputs against a real server process on 127.0.0.1, each sent once from
// this process (the server has its own), with a /healthz sent while it is in flight. Prints a
// Markdown table: the input, the answer, its time and the /healthz time beside it. Bounded: one
// request per input. Then clients that pipeline list requests and never read the answers
// (unread-answers.ts), each kind on a server process of its own: the server's RSS before and at
// its highest, with a /healthz beside them.
//
// Then another organization's requests beside a flood (body-flood.ts, a process of its own): one
// key posting 1 MB JSON bodies of 500,000 numbers, 4 at once (its share in progress), each again
// once answered, for --seconds; the neighbour's /healthz and agents list, each sent one after
// another, are timed alone and then beside it for as long.
//
//   pnpm bench:hostile [--database <file or postgres:// URL>] [--seconds 10]

import { spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { createDb } from '../../apps/server/src/db/engine/client.js';
import { migrateDb } from '../../apps/server/src/db/engine/migrate.js';
import { createKeyWithOwnRole } from '../../apps/server/src/use-cases/api-keys.js';
import { cursorSigner } from '../../apps/server/src/serving/cursor-signer.js';
import { DEMO_RECORDS } from '../../apps/server/src/cli/demo-data.js';
import { platformRecordsSchema } from '../../apps/server/src/records/format.js';
import { listChannelTargets } from '../../apps/server/src/db/repositories/directory.js';
import { loadPlatformRecords } from '../../apps/server/src/records/loader.js';
import type { Permission } from '../../apps/server/src/vocabulary/permissions.js';
import { AGENT_LIST } from '../../apps/server/src/domain/agents.js';
import { CHANNEL_TARGET_LIST } from '../../apps/server/src/domain/channel-targets.js';
import { EVENT_LIST } from '../../apps/server/src/domain/events.js';
import { parseListQuery } from '../../apps/server/src/domain/list-query.js';
import {
  sealedCursor,
  unkeyedCursor,
  walkOf,
} from '../../apps/server/test/support/forged-cursors.js';
import { startServerProcess } from '../../apps/server/test/support/server-process.js';
import { buildEvents } from './bench-events.js';
import { benchTenant } from './bench-tenant.js';
import { Latencies } from './open-loop.js';
import { leaveAnswersUnread } from './unread-answers.js';

const { values: options } = parseArgs({
  options: { database: { type: 'string' }, seconds: { type: 'string', default: '10' } },
});
const floodSeconds = Number(options.seconds);
if (!(floodSeconds > 0 && floodSeconds <= 20)) throw new Error('--seconds is 1 to 20');
const scratch = mkdtempSync(join(tmpdir(), 'agentline-hostile-'));
const databaseUrl = options.database ?? join(scratch, 'agentline.db');

const db = createDb(databaseUrl);
await migrateDb(db);
const tenant = await benchTenant(db, `Hostile ${Date.now()}`);
await loadPlatformRecords(db, tenant.organizationId, platformRecordsSchema.parse(DEMO_RECORDS));
const neighbour = await benchTenant(db, `Hostile's neighbour ${Date.now()}`);
await loadPlatformRecords(db, neighbour.organizationId, platformRecordsSchema.parse(DEMO_RECORDS));
// A full page for the unread answers' list requests (about 330 KB of JSON at limit=1000).
await buildEvents(db, [tenant.organizationId], 1000);
// A live target (not an agent-test one) of the demo records, for the session-routing inputs.
const signer = await cursorSigner(db);
const liveTargets = await parseListQuery(
  CHANNEL_TARGET_LIST,
  {
    page: 0,
    limit: 1,
    search_fields: ['is_agent_test'],
    search_field_values: ['false'],
    fields: [],
  },
  tenant.organizationId,
  signer,
);
const [target] = (await listChannelTargets(db, tenant.organizationId, liveTargets)).records;
if (!target) throw new Error('the demo records hold no live channel target');
const keyWith = (roleName: string, permissions: Permission[]) =>
  createKeyWithOwnRole(db, {
    organizationId: tenant.organizationId,
    roleName,
    keyName: roleName,
    permissions,
  });
const parkedKey = await keyWith('parked', []);
const readerKey = await keyWith('reader', ['CHANNELS_READ']);
// Forged list cursors: the unkeyed construction of the cursors before cursors were signed, and positions
// that do not fit the order sealed with the database's own secret (as a leaked secret allows).
const agentsWalk = walkOf(AGENT_LIST, tenant.organizationId);
const eventsWalk = walkOf(EVENT_LIST, tenant.organizationId);
const forgedCursors: Array<[string, string]> = [
  [
    'a forged cursor (unkeyed SHA-256), id 3e9',
    `/api/v1/agents/?cursor=${unkeyedCursor(agentsWalk, 3e9, 3e9)}`,
  ],
  [
    'a forged cursor (unkeyed SHA-256), a boolean where an integer is ordered',
    `/api/v1/agents/?cursor=${unkeyedCursor(agentsWalk, true, 1)}`,
  ],
  [
    'a cursor sealed with the real secret, id 2^53 - 1',
    `/api/v1/agents/?cursor=${sealedCursor(signer, agentsWalk, 1, Number.MAX_SAFE_INTEGER)}`,
  ],
  [
    'a cursor sealed with the real secret, a string where an integer is ordered',
    `/api/v1/agents/?cursor=${sealedCursor(signer, agentsWalk, 'x', 1)}`,
  ],
  [
    'a cursor sealed with the real secret, null where the order is never null',
    `/api/v1/events/?cursor=${sealedCursor(signer, eventsWalk, null, 1)}`,
  ],
  [
    'a seal naming a secret that does not exist',
    `/api/v1/events/?cursor=${sealedCursor(signer, eventsWalk, '2026-01-01T00:00:00.000Z', 1).replace(/\.\d+\./, '.999.')}`,
  ],
];
await db.close();

const server = await startServerProcess({ DATABASE_URL: databaseUrl }, { keepOutput: false });

interface Input {
  name: string;
  method?: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  /** Sent first and not timed: what the input follows (an earlier use of its Idempotency-Key). */
  after?: Input;
}

const sessions = `/api/v1/channels/targets/${target.id}/sessions`;
const json = { 'Content-Type': 'application/json' };
const keyed = { 'Service-API-Key': tenant.key, ...json };
const nested = (levels: number) => `{"a":${'['.repeat(levels)}1${']'.repeat(levels)}}`;
const heavy = `{"a":[${Array.from({ length: 150 }, () => '['.repeat(3000) + ']'.repeat(3000)).join(',')},"\\\\u0000"]}`;

const inputs: Input[] = [
  {
    name: '900 KB of nested brackets, no key',
    path: '/api/v1/experiments/',
    headers: json,
    body: heavy,
  },
  {
    name: '900 KB of nested brackets, with a key',
    path: '/api/v1/experiments/',
    headers: keyed,
    body: heavy,
  },
  { name: '8,000 levels of nesting, no key', path: sessions, headers: json, body: nested(8000) },
  {
    name: '8,000 levels of nesting, with a key',
    path: sessions,
    headers: keyed,
    body: nested(8000),
  },
  {
    name: 'an escaped NUL in user_id',
    path: sessions,
    headers: keyed,
    body: '{"user_id":"a\\u0000"}',
  },
  {
    name: 'a lone surrogate in user_id',
    path: sessions,
    headers: keyed,
    body: '{"user_id":"a\\ud800"}',
  },
  {
    name: 'an array of 150,000 numbers',
    path: '/api/v1/experiments/',
    headers: keyed,
    body: `{"variants":[${'1,'.repeat(149_999)}1]}`,
  },
  {
    name: 'a session with an extra 300,000-item property',
    path: sessions,
    headers: keyed,
    body: `{"user_id":"+14155550100","extra":[${'1,'.repeat(299_999)}1]}`,
  },
  {
    name: 'a body without Content-Type',
    path: sessions,
    headers: { 'Service-API-Key': tenant.key },
    body: '{"user_id":"a"}',
  },
  {
    name: 'Content-Type: text/plain',
    path: sessions,
    headers: { ...keyed, 'Content-Type': 'text/plain' },
    body: '{"user_id":"a"}',
  },
  {
    name: 'charset=utf-16',
    path: sessions,
    headers: { ...keyed, 'Content-Type': 'application/json; charset=utf-16' },
    body: '{"user_id":"a"}',
  },
  {
    name: 'a gzip body',
    path: sessions,
    headers: { ...keyed, 'Content-Encoding': 'gzip' },
    body: gzipSync('{"user_id":"a"}'),
  },
  {
    name: 'a plain body labelled gzip',
    path: sessions,
    headers: { ...keyed, 'Content-Encoding': 'gzip' },
    body: '{"user_id":"a"}',
  },
  {
    name: 'a body over the 1 MiB limit',
    path: sessions,
    headers: keyed,
    body: `{"user_id":"${'x'.repeat(1_100_000)}"}`,
  },
  {
    name: '?fields=bogus',
    method: 'GET',
    path: '/api/v1/events/?fields=bogus',
    headers: { 'Service-API-Key': tenant.key },
  },
  {
    name: 'an empty Idempotency-Key',
    path: sessions,
    headers: { ...keyed, 'Idempotency-Key': '' },
    body: '{}',
  },
  ...forgedCursors.map(([name, path]) => ({
    name,
    method: 'GET',
    path,
    headers: { 'Service-API-Key': tenant.key },
  })),
  {
    name: 'a parked key (no permission), 1 MB body',
    path: '/api/v1/experiments/',
    headers: { ...json, 'Service-API-Key': parkedKey, 'Idempotency-Key': 'parked-1' },
    body: `{"name":"${'x'.repeat(1_000_000)}"}`,
  },
  {
    name: 'a reader key, `{bad` to create an experiment',
    path: '/api/v1/experiments/',
    headers: { ...json, 'Service-API-Key': readerKey },
    body: '{bad',
  },
  {
    name: "a routed session's Idempotency-Key on another target",
    path: '/api/v1/channels/targets/424242/sessions',
    headers: { ...keyed, 'Idempotency-Key': 'reused-1' },
    body: '{}',
    after: {
      name: '',
      path: sessions,
      headers: { ...keyed, 'Idempotency-Key': 'reused-1' },
      body: '{}',
    },
  },
  {
    name: "a rejected create's Idempotency-Key on session routing",
    path: sessions,
    headers: { ...keyed, 'Idempotency-Key': 'reused-2' },
    body: '{}',
    after: {
      name: '',
      path: '/api/v1/experiments/',
      headers: { ...keyed, 'Idempotency-Key': 'reused-2' },
      body: `{"name":"x","target_id":${target.id},"variants":[{"name":"a","weight":60,"agent_id":1},{"name":"b","weight":60,"agent_id":2}]}`,
    },
  },
  {
    name: 'Host: [::ffff:127.0.0.1]:port',
    method: 'GET',
    path: '/healthz',
    headers: { Host: '[::ffff:127.0.0.1]:8080' },
  },
  {
    name: 'an unknown key id',
    method: 'GET',
    path: '/api/v1/events/',
    headers: { 'Service-API-Key': `agl_${'z'.repeat(12)}_${'W'.repeat(32)}` },
  },
  {
    name: 'a known key id with a wrong secret',
    method: 'GET',
    path: '/api/v1/events/',
    headers: { 'Service-API-Key': `${tenant.key.slice(0, 16)}_${'W'.repeat(32)}` },
  },
];

function send(input: Input): Promise<{ status: number; code: string; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const body = input.body === undefined ? undefined : Buffer.from(input.body);
    const req = httpRequest(`${server.baseUrl}${input.path}`, {
      method: input.method ?? 'POST',
      headers: { ...input.headers, ...(body ? { 'Content-Length': String(body.length) } : {}) },
    });
    req.on('response', (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => {
        const parsed = text ? (JSON.parse(text) as { code?: string; detail?: unknown }) : {};
        const code =
          parsed.code ??
          (Array.isArray(parsed.detail) ? (parsed.detail[0] as { type: string }).type : '');
        resolve({ status: res.statusCode!, code, ms: performance.now() - started });
      });
    });
    req.on('error', (error: NodeJS.ErrnoException) =>
      error.code === 'EPIPE' || error.code === 'ECONNRESET' ? undefined : reject(error),
    );
    if (body) req.write(body);
    req.end();
  });
}

async function healthzWhile(work: Promise<unknown>): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, 2));
  const started = performance.now();
  await fetch(`${server.baseUrl}/healthz`);
  const ms = performance.now() - started;
  await work;
  return ms;
}

/** The flood (body-flood.ts, a process of its own) of `clients` connections until `until`. */
async function flood(clients: number, until: number): Promise<Record<string, number>> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      fileURLToPath(new URL('body-flood.ts', import.meta.url)),
      `${server.baseUrl}${sessions}`,
      tenant.key,
      String(clients),
      String((until - performance.now()) / 1000),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`the flood exited with ${code}`);
  return JSON.parse(output) as Record<string, number>;
}

/** The times of GETs of `path`, one after another with a 10 ms pause, until `until`. */
async function timedGets(path: string, headers: Record<string, string>, until: number) {
  const times = new Latencies();
  while (performance.now() < until) {
    const started = performance.now();
    const res = await fetch(`${server.baseUrl}${path}`, { headers });
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`GET ${path} answered ${res.status}`);
    times.add(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return times;
}

/** The neighbour's /healthz and agents list, each timed over `seconds`, beside `work` if given. */
async function neighbourTimes<T>(seconds: number, work?: (until: number) => Promise<T>) {
  const until = performance.now() + seconds * 1000;
  const [healthz, list, worked] = await Promise.all([
    timedGets('/healthz', {}, until),
    timedGets('/api/v1/agents/', { 'Service-API-Key': neighbour.key }, until),
    work?.(until),
  ]);
  return { healthz, list, worked };
}

const fixed = (value: number) => value.toFixed(1);

async function answerInputs(): Promise<void> {
  try {
    await fetch(`${server.baseUrl}/healthz`);
    console.log('| Input | Answer | Time | /healthz meanwhile |');
    console.log('|---|---|---|---|');
    for (const input of inputs) {
      if (input.after) await send(input.after);
      const answer = send(input);
      const healthMs = await healthzWhile(answer);
      const { status, code, ms } = await answer;
      console.log(
        `| ${input.name} | ${status} ${code} | ${ms.toFixed(1)} ms | ${healthMs.toFixed(1)} ms |`,
      );
    }

    const alone = await neighbourTimes(floodSeconds);
    const beside = await neighbourTimes(floodSeconds, (until) => flood(4, until));
    console.log(
      `\nAnother organization beside one key's 4 concurrent 1 MB bodies of 500,000 numbers (${floodSeconds} s each):\n`,
    );
    console.log('| Request | Alone: n, p50, p99 | Beside the bodies: n, p50, p99 |');
    console.log('|---|---|---|');
    for (const name of ['healthz', 'list'] as const) {
      const [a, b] = [alone[name], beside[name]];
      console.log(
        `| ${name === 'list' ? 'agents list' : '/healthz'} | ${a.count}, ${fixed(a.percentile(50))} ms, ${fixed(a.percentile(99))} ms | ${b.count}, ${fixed(b.percentile(50))} ms, ${fixed(b.percentile(99))} ms |`,
      );
    }
    console.log(
      `\nThe bodies' answers: ${Object.entries(beside.worked!)
        .map(([answer, n]) => `${n} x ${answer}`)
        .join(', ')}`,
    );
  } finally {
    await server.stop();
  }
}

try {
  await answerInputs();
  await leaveAnswersUnread(databaseUrl, tenant.key);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
