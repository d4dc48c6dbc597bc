// Clients that pipeline requests on keep-alive connections and never read what comes back: what
// the server process holds for them (its RSS), and whether it still answers others meanwhile.
// One of pnpm bench:hostile's probes; bounded by its waits.

import { connect, type Socket } from 'node:net';
import { startServerProcess } from '../../apps/server/test/support/server-process.js';

/** RSS is still once it has not risen by more than this... */
const STILL_MIB = 1;
/** ...for this long (sampled every SAMPLE_MS), */
const STILL_FOR_MS = 2_000;
const SAMPLE_MS = 250;
/** or at the latest after this, so that the probe stays bounded. */
const AT_MOST_MS = 20_000;

export interface UnreadAnswersProbe {
  baseUrl: string;
  key: string;
  /** The request each client pipelines (a path with its query). */
  path: string;
  /** Asked once, and read, before the server's RSS is read: what its first request costs. */
  warmUpPath: string;
  connections: number;
  requestsEach: number;
  rssMiB: () => number;
}

export interface UnreadAnswersFigures {
  rssBeforeMiB: number;
  rssHighestMiB: number;
  /** How long a /healthz on a connection of its own took while the clients held theirs. */
  healthzMs: number;
  /** How long RSS took to come to rest. */
  settledMs: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function connected(port: number, host: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, host, () => {
      socket.off('error', reject);
      // The server may cut a client that never reads; that is an outcome, not the probe's error.
      socket.on('error', () => {});
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

export async function unreadAnswers(probe: UnreadAnswersProbe): Promise<UnreadAnswersFigures> {
  const { hostname, port } = new URL(probe.baseUrl);
  const request = `GET ${probe.path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nService-API-Key: ${probe.key}\r\n\r\n`;
  const warmUp = await fetch(`${probe.baseUrl}${probe.warmUpPath}`, {
    headers: { 'Service-API-Key': probe.key },
  });
  await warmUp.arrayBuffer();
  const rssBeforeMiB = probe.rssMiB();
  const sockets = await Promise.all(
    Array.from({ length: probe.connections }, () => connected(Number(port), hostname)),
  );
  const started = performance.now();
  // Never read: a socket without a 'data' listener takes at most its stream's high-water mark
  // off the kernel, and the rest of the answers wait in the server.
  for (const socket of sockets) socket.write(request.repeat(probe.requestsEach));
  let rssHighestMiB = probe.rssMiB();
  let stillSince = performance.now();
  while (
    performance.now() - stillSince < STILL_FOR_MS &&
    performance.now() - started < AT_MOST_MS
  ) {
    await sleep(SAMPLE_MS);
    const now = probe.rssMiB();
    if (now > rssHighestMiB + STILL_MIB) stillSince = performance.now();
    rssHighestMiB = Math.max(rssHighestMiB, now);
  }
  const settledMs = stillSince - started;
  const healthStarted = performance.now();
  const health = await fetch(`${probe.baseUrl}/healthz`);
  await health.arrayBuffer();
  const healthzMs = performance.now() - healthStarted;
  for (const socket of sockets) socket.destroy();
  return { rssBeforeMiB, rssHighestMiB, healthzMs, settledMs };
}

/**
 * The pipelining clients. A page asked for again is made once and then served from the kept
 * answers; asked for with a cursor it is never kept, so that each request makes an answer of its
 * own, as distinct queries would.
 */
const UNREAD_ANSWERS = [
  { connections: 1, requestsEach: 240, withCursor: false },
  { connections: 64, requestsEach: 30, withCursor: false },
  { connections: 64, requestsEach: 30, withCursor: true },
];
const UNREAD_PATH = '/api/v1/events/?limit=1000';
// The server's first list request compiles code and starts its reader threads, as any first request
// would: made before RSS is read, with a page of another size, so that the clients' page is not
// kept already.
const UNREAD_WARM_UP_PATH = '/api/v1/events/?limit=999';

/** The cursor of the events list's second page, the first holding one event. */
async function firstCursor(baseUrl: string, key: string): Promise<string> {
  const page = await fetch(`${baseUrl}/api/v1/events/?limit=1`, {
    headers: { 'Service-API-Key': key },
  });
  return ((await page.json()) as { next_cursor: string }).next_cursor;
}

/**
 * Each kind of pipelining client against a server process of its own on `databaseUrl`, whose
 * organization of `key` holds a full page of events; prints a Markdown table of the server's RSS.
 */
export async function leaveAnswersUnread(databaseUrl: string, key: string): Promise<void> {
  console.log(
    '\n| Clients that pipeline and never read | Server RSS before | at its highest | /healthz meanwhile |',
  );
  console.log('|---|---|---|---|');
  for (const { connections, requestsEach, withCursor } of UNREAD_ANSWERS) {
    // A server of its own for each: once one answer to the list is made it is kept, and a server
    // that kept it in an earlier probe would make no new one.
    const fresh = await startServerProcess({ DATABASE_URL: databaseUrl }, { keepOutput: false });
    let figures;
    try {
      figures = await unreadAnswers({
        baseUrl: fresh.baseUrl,
        key,
        path: withCursor
          ? `${UNREAD_PATH}&cursor=${await firstCursor(fresh.baseUrl, key)}`
          : UNREAD_PATH,
        warmUpPath: UNREAD_WARM_UP_PATH,
        connections,
        requestsEach,
        rssMiB: () => fresh.rssMiB(),
      });
    } finally {
      await fresh.stop();
    }
    const mib = (value: number) => `${value.toFixed(0)} MiB`;
    const growth = (figures.rssHighestMiB - figures.rssBeforeMiB).toFixed(0);
    console.log(
      `| ${connections} x ${requestsEach} pipelined \`GET ${UNREAD_PATH}${withCursor ? '&cursor=...' : ''}\` | ${mib(figures.rssBeforeMiB)} | ${mib(figures.rssHighestMiB)} (+${growth}, at rest after ${(figures.settledMs / 1000).toFixed(1)} s) | ${figures.healthzMs.toFixed(1)} ms |`,
    );
  }
}
