// The SDK's client.events.stream against a real server process that is killed mid-stream and
// started again: the iterator reconnects with Last-Event-ID and continues with nothing lost or
// repeated; its position lets a caller's own new process continue where the old one stopped.

import { rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import { AuthenticationError, createClient, type Event } from '@agentline/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../src/db/engine/client.js';
import { migrateDb } from '../src/db/migrate.js';
import { createTenant, type Tenant } from './support/harness.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';
import { freshDatabaseUrl, insertTestEvents, onSqlite } from './support/test-database.js';

let databaseUrl: string;
let db: Db;
let acme: Tenant;
let server: ServerProcess | undefined;
let port: number;
let written = 0;

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port: free } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return free;
}

const start = () =>
  startServerProcess({ DATABASE_URL: databaseUrl, PORT: String(port) }, { keepOutput: false });

beforeAll(async () => {
  databaseUrl = await freshDatabaseUrl();
  db = createDb(databaseUrl);
  await migrateDb(db);
  acme = await createTenant(db, 'Acme');
  port = await freePort();
  server = await start();
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await db.close();
  if (onSqlite) rmSync(dirname(databaseUrl), { recursive: true, force: true });
});

async function write(count: number): Promise<string[]> {
  const types = Array.from({ length: count }, () => `sdk-${(written += 1)}`);
  await insertTestEvents(
    db,
    types.map((type) => ({
      organizationId: acme.organizationId,
      timestamp: '2026-10-01T00:00:00.000Z',
      type,
    })),
  );
  return types;
}

async function until(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not reached within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('client.events.stream', () => {
  it('continues across a killed and restarted server with nothing lost or repeated', async () => {
    const client = createClient({ apiKey: acme.key, baseUrl: `http://127.0.0.1:${port}` });
    const stop = new AbortController();
    const stream = client.events.stream({}, { signal: stop.signal });
    const received: Event[] = [];
    const reading = (async () => {
      for await (const event of stream) received.push(event);
    })();
    // The stream starts at "now" once it is open, which a busy machine may take a while to do:
    // an event at a time until one arrives, so that none written below comes before it opened.
    // Every event after the first that arrives arrives too, the last one written among them.
    const probes: string[] = [];
    while (received.length === 0) {
      probes.push(...(await write(1)));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await until(() => received.at(-1)?.type === probes.at(-1), 5_000);
    const expected = received.map((event) => event.type);
    expected.push(...(await write(100)));
    await until(() => received.length === expected.length, 5_000);

    await server!.stop('SIGKILL');
    expected.push(...(await write(100)));
    server = await start();
    expected.push(...(await write(100)));
    await until(() => received.length >= expected.length, 30_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(received.map((event) => event.type)).toEqual(expected);

    // The caller stops, saves the position, and a new iterator (a new process) continues.
    stop.abort();
    await reading;
    const saved = stream.position;
    expect(saved).toMatch(/.+/);
    const resumedFrom = expected.length;
    expected.push(...(await write(50)));
    const later = new AbortController();
    const resumed: Event[] = [];
    for await (const event of client.events.stream(
      {},
      { lastEventId: saved, signal: later.signal },
    )) {
      resumed.push(event);
      if (resumed.length === 50) later.abort();
    }
    expect(resumed.map((event) => event.type)).toEqual(expected.slice(resumedFrom));
  }, 60_000);

  it('throws what a retry cannot fix', async () => {
    const client = createClient({ apiKey: 'agl_nope_nope', baseUrl: `http://127.0.0.1:${port}` });
    const iterate = async () => {
      for await (const event of client.events.stream()) void event;
    };
    await expect(iterate()).rejects.toBeInstanceOf(AuthenticationError);
  });
});
