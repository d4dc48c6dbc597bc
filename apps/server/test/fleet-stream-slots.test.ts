// EVENT_STREAMS_PER_KEY holds for every server process on one database together: a key's streams
// opened on two real server processes count against one cap, and a slot a stream let go is free
// in the other process at once.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../src/db/engine/client.js';
import { openEventStream } from './support/event-stream.js';
import { createKey, createTenant, type Tenant } from './support/harness.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';
import { createSharedTestDb, type SharedTestDb } from './support/test-database.js';

const PER_KEY = 3;
let database: SharedTestDb;
let databaseUrl: string;
let db: Db;
let acme: Tenant;
let servers: ServerProcess[] = [];

beforeAll(async () => {
  database = await createSharedTestDb();
  ({ databaseUrl, db } = database);
  acme = await createTenant(db, 'Acme');
  servers = await Promise.all(
    [0, 1].map(() =>
      startServerProcess({ DATABASE_URL: databaseUrl, EVENT_STREAMS_PER_KEY: String(PER_KEY) }),
    ),
  );
}, 60_000);

afterAll(async () => {
  await Promise.all(servers.map((server) => server.stop()));
  await database?.close();
});

describe('a key’s stream cap across server processes', () => {
  it('counts the streams of every process against one cap', async () => {
    const [a, b] = servers as [ServerProcess, ServerProcess];
    const key = await createKey(db, acme.organizationId, ['EVENTS_READ']);
    // Opened together, two on one process and one on the other.
    const open = await Promise.all(
      [a, a, b].map((server) => openEventStream(server.baseUrl, { key })),
    );
    expect(open.map(({ status }) => status)).toEqual([200, 200, 200]);
    for (const server of [a, b]) {
      const extra = await openEventStream(server.baseUrl, { key });
      expect(extra.status).toBe(429);
      expect(extra.headers.get('retry-after')).toBe('1');
      extra.close();
    }
    // Another key is not held back.
    const other = await openEventStream(b.baseUrl, { key: acme.key });
    expect(other.status).toBe(200);
    other.close();
    // One closed on a: its slot is b's to take.
    open[0]!.close();
    await open[0]!.ended;
    let again = await openEventStream(b.baseUrl, { key });
    for (let tries = 0; again.status === 429 && tries < 50; tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      again = await openEventStream(b.baseUrl, { key });
    }
    expect(again.status).toBe(200);
    for (const stream of [...open, again]) stream.close();
  });

  it('lets a stopped process’s streams go for another to open', async () => {
    const key = await createKey(db, acme.organizationId, ['EVENTS_READ']);
    const spare = await startServerProcess({
      DATABASE_URL: databaseUrl,
      EVENT_STREAMS_PER_KEY: String(PER_KEY),
    });
    const held = await Promise.all(
      Array.from({ length: PER_KEY }, () => openEventStream(spare.baseUrl, { key })),
    );
    expect(held.map(({ status }) => status)).toEqual(held.map(() => 200));
    const refused = await openEventStream(servers[0]!.baseUrl, { key });
    expect(refused.status).toBe(429);
    refused.close();
    // SIGTERM ends its streams; their slots are let go before it exits.
    await spare.stop();
    const reopened = await Promise.all(
      Array.from({ length: PER_KEY }, () => openEventStream(servers[0]!.baseUrl, { key })),
    );
    expect(reopened.map(({ status }) => status)).toEqual(reopened.map(() => 200));
    for (const stream of reopened) stream.close();
  });
});
