// Probes of the HTTP front door against a real server process on 127.0.0.1, each
// printed as a Markdown table: what the server answers on its own to requests that are not valid
// HTTP or name a bad Host, whether a client still writing a large body can read an early answer,
// and whether clients failing authentication take the API away from valid keys at their address.
//
//   pnpm bench:front-door [--database <file or postgres:// URL>] [--seconds 20]

import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createDb } from '../../apps/server/src/db/engine/client.js';
import { migrateDb } from '../../apps/server/src/db/engine/migrate.js';
import { startServerProcess } from '../../apps/server/test/support/server-process.js';
import { benchTenant } from './bench-tenant.js';

const { values: options } = parseArgs({
  options: { database: { type: 'string' }, seconds: { type: 'string', default: '20' } },
});
const scratch = mkdtempSync(join(tmpdir(), 'agentline-front-door-'));
const databaseUrl = options.database ?? join(scratch, 'agentline.db');
const db = createDb(databaseUrl);
await migrateDb(db);
const tenant = await benchTenant(db, `Front door ${Date.now()}`);
await db.close();

interface RawAnswer {
  status: string;
  contentType: string;
  requestId: boolean;
  code: string;
  /** The whole JSON body arrived (Content-Length bytes after the head). */
  complete: boolean;
  error: string;
  ms: number;
}

function parseAnswer(text: string): Omit<RawAnswer, 'error' | 'ms'> {
  const headEnd = text.indexOf('\r\n\r\n');
  const head = headEnd === -1 ? text : text.slice(0, headEnd);
  const header = (name: string) =>
    new RegExp(`^${name}: *(.*)$`, 'im').exec(head)?.[1]?.trim() ?? '';
  const body = headEnd === -1 ? '' : text.slice(headEnd + 4);
  const length = Number(header('content-length') || Number.NaN);
  let code: string;
  try {
    code = String((JSON.parse(body) as { code?: string }).code ?? '');
  } catch {
    code = body === '' ? '(empty)' : '(not JSON)';
  }
  return {
    status: /^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? '-',
    contentType: header('content-type') || '-',
    requestId: header('x-request-id') !== '',
    code,
    complete: Number.isFinite(length) && Buffer.byteLength(body) === length && length > 0,
  };
}

interface RawRequest {
  /** The request head (and any body) as written; `port` is replaced by the server's port. */
  head: string;
  /** Bytes of body written after the head, in chunks of 16 KiB every `delayMs`. */
  bodyBytes?: number;
  chunked?: boolean;
  delayMs?: number;
  /** Read the answer only once everything is written (as many simple clients do). */
  readLate?: boolean;
  from?: string;
}

/** Writes a request over a raw socket and collects what comes back until the server closes. */
function sendRaw(port: number, request: RawRequest): Promise<RawAnswer> {
  const started = performance.now();
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress: request.from });
    let text = '';
    let error = '';
    let sawAnswer = false;
    const finish = () => {
      clearTimeout(giveUp);
      resolve({ ...parseAnswer(text), error, ms: performance.now() - started });
    };
    const onData = (chunk: Buffer) => {
      text += chunk.toString('latin1');
      const parsed = parseAnswer(text);
      if (parsed.complete && !sawAnswer) {
        sawAnswer = true;
        // One answer is all a probe wants: close once it is complete and everything is written.
        if (sent >= (request.bodyBytes ?? 0)) socket.end();
      }
    };
    if (!request.readLate) socket.on('data', onData);
    socket.on('error', (e: NodeJS.ErrnoException) => (error ||= e.code ?? e.message));
    socket.on('close', finish);
    const giveUp = setTimeout(() => socket.destroy(), 15_000);
    socket.write(request.head.replaceAll('PORT', String(port)));
    let sent = 0;
    const total = request.bodyBytes ?? 0;
    const chunk = Buffer.alloc(16 * 1024, 'a');
    const writeMore = () => {
      if (socket.destroyed) return;
      if (sent >= total) {
        if (request.chunked) socket.write('0\r\n\r\n');
        if (request.readLate) socket.on('data', onData);
        if (sawAnswer) socket.end();
        return;
      }
      const part = chunk.subarray(0, Math.min(chunk.length, total - sent));
      socket.write(request.chunked ? `${part.length.toString(16)}\r\n` : '');
      socket.write(part);
      if (request.chunked) socket.write('\r\n');
      sent += part.length;
      setTimeout(writeMore, request.delayMs ?? 0);
    };
    writeMore();
  });
}

const server = await startServerProcess(
  { DATABASE_URL: databaseUrl, TRUSTED_PROXIES: '127.0.0.9' },
  { keepOutput: false },
);
const port = Number(new URL(server.baseUrl).port);

function row(cells: Array<string | number>): void {
  console.log(`| ${cells.join(' | ')} |`);
}

async function probeServerAnswers(): Promise<void> {
  const get = (path: string, headers: string) =>
    `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\n${headers}Connection: close\r\n\r\n`;
  const probes: Array<[string, string]> = [
    [
      'Host: [::ffff:127.0.0.1]:port',
      get('/healthz', '').replace(/Host: [^\r]*/, 'Host: [::ffff:127.0.0.1]:PORT'),
    ],
    ['Host: a b', get('/healthz', '').replace(/Host: [^\r]*/, 'Host: a b')],
    ['a backslash in the path', get('/api/v1\\events/', '')],
    ['HTTP/1.1 without Host', 'GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n'],
    ['a header line without a colon', get('/healthz', 'Bad Header\r\n')],
    ['a space before the colon', get('/healthz', 'X-Thing : 1\r\n')],
    ['an unknown method', 'BREW /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'],
    [
      'Content-Length and chunked',
      'POST /api/v1/events/ HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n',
    ],
    ['Expect: 200-ok', get('/healthz', 'Expect: 200-ok\r\n')],
    ['CONNECT', 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'],
    ['20 KB of headers', get('/healthz', `X-Padding: ${'x'.repeat(20_000)}\r\n`)],
  ];
  console.log('\n| Input | Status | Content-Type | X-Request-Id | code | Time |');
  console.log('|---|---|---|---|---|---|');
  for (const [name, head] of probes) {
    const answer = await sendRaw(port, { head });
    row([
      name,
      answer.status,
      answer.contentType,
      answer.requestId ? 'yes' : 'no',
      answer.code || '-',
      `${answer.ms.toFixed(1)} ms`,
    ]);
  }
}

async function probeEarlyAnswers(): Promise<void> {
  const post = (headers: string) =>
    `POST /api/v1/experiments/ HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\nContent-Type: application/json\r\n${headers}\r\n`;
  const cases: Array<[string, RawRequest]> = [
    [
      '900 KB without a key, read as it comes',
      { head: post('Content-Length: 900000\r\n'), bodyBytes: 900_000, delayMs: 15 },
    ],
    [
      '900 KB without a key, read after writing',
      { head: post('Content-Length: 900000\r\n'), bodyBytes: 900_000, delayMs: 15, readLate: true },
    ],
    [
      '1.5 MB chunked with a key (413 once 1 MiB is read), read after writing',
      {
        head: post(`Service-API-Key: ${tenant.key}\r\nTransfer-Encoding: chunked\r\n`),
        bodyBytes: 1_500_000,
        chunked: true,
        delayMs: 15,
        readLate: true,
      },
    ],
    [
      '5 MB declared with a key (413 at once), read as it comes',
      {
        head: post(`Service-API-Key: ${tenant.key}\r\nContent-Length: 5000000\r\n`),
        bodyBytes: 5_000_000,
        delayMs: 15,
      },
    ],
  ];
  console.log(
    '\n| Input (16 KiB every 15 ms) | Runs | Full answer read | Answer | Client error | Time |',
  );
  console.log('|---|---|---|---|---|---|');
  for (const [name, request] of cases) {
    const answers: RawAnswer[] = [];
    for (let run = 0; run < 4; run += 1) answers.push(await sendRaw(port, request));
    const read = answers.filter((a) => a.complete);
    const errors = [...new Set(answers.map((a) => a.error).filter((e) => e !== ''))];
    const times = answers.map((a) => a.ms);
    row([
      name,
      answers.length,
      read.length,
      [...new Set(answers.map((a) => `${a.status} ${a.code}`))].join(', '),
      errors.join(', ') || '-',
      `${Math.min(...times).toFixed(0)}-${Math.max(...times).toFixed(0)} ms`,
    ]);
  }
}

async function probeFailureLimit(seconds: number): Promise<void> {
  const get = (key: string | null, forwardedFor?: string) =>
    `GET /api/v1/events/?limit=0 HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\n` +
    (key ? `Service-API-Key: ${key}\r\n` : '') +
    (forwardedFor ? `X-Forwarded-For: ${forwardedFor}\r\n` : '') +
    'Connection: close\r\n\r\n';
  const spend = async (key: string | null, from?: string, forwardedFor?: string) => {
    for (let i = 0; i < 61; i += 1) await sendRaw(port, { head: get(key, forwardedFor), from });
  };
  console.log('\n| Probe | Answers |');
  console.log('|---|---|');
  const count = (statuses: string[]) =>
    Object.entries(
      statuses.reduce<Record<string, number>>((n, s) => ({ ...n, [s]: (n[s] ?? 0) + 1 }), {}),
    )
      .map(([status, n]) => `${n}x ${status}`)
      .join(', ');

  // A client without a key at 2 requests a second, and a client with a valid key at 2 a second,
  // from one address (127.0.0.1), after the address has used up its failures.
  await spend(null);
  const valid: string[] = [];
  const failing: string[] = [];
  const until = performance.now() + seconds * 1000;
  await Promise.all([
    (async () => {
      while (performance.now() < until) {
        failing.push((await sendRaw(port, { head: get(null) })).status);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    })(),
    (async () => {
      await new Promise((resolve) => setTimeout(resolve, 250));
      while (performance.now() < until) {
        valid.push((await sendRaw(port, { head: get(tenant.key) })).status);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    })(),
  ]);
  row([`valid key, ${seconds} s beside a keyless client at one spent address`, count(valid)]);
  row([`the keyless client meanwhile`, count(failing)]);

  // Budgets per IPv6 /64, through a trusted proxy (127.0.0.9) that names the client.
  await spend(null, '127.0.0.9', '2001:db8:1:1::1');
  const sameSlash64: string[] = [];
  for (let i = 2; i < 12; i += 1) {
    sameSlash64.push(
      (
        await sendRaw(port, {
          head: get(null, `2001:db8:1:1::${i.toString(16)}`),
          from: '127.0.0.9',
        })
      ).status,
    );
  }
  row(['no key from 10 other addresses of the spent /64', count(sameSlash64)]);
  const otherSlash64 = await sendRaw(port, {
    head: get(null, '2001:db8:1:2::1'),
    from: '127.0.0.9',
  });
  row(['no key from another /64', otherSlash64.status]);

  // One key id with wrong secrets from many addresses.
  const keyId = tenant.key.slice(0, 'agl_'.length + 12);
  const wrong = `${keyId}_${'W'.repeat(32)}`;
  const spread: string[] = [];
  for (let i = 0; i < 70; i += 1) {
    spread.push(
      (await sendRaw(port, { head: get(wrong, `198.51.100.${i + 1}`), from: '127.0.0.9' })).status,
    );
  }
  row(['70 wrong secrets of one key id, each from another address', count(spread)]);
  const rightSecret = await sendRaw(port, {
    head: get(tenant.key, '198.51.100.200'),
    from: '127.0.0.9',
  });
  row(['then its valid secret', rightSecret.status]);
}

try {
  await fetch(`${server.baseUrl}/healthz`);
  await probeServerAnswers();
  await probeEarlyAnswers();
  await probeFailureLimit(Number(options.seconds));
} finally {
  await server.stop();
  rmSync(scratch, { recursive: true, force: true });
}
