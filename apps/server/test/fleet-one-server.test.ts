// Three server processes behind HAProxy (support/fleet.ts) hold what one server would for a key
// whose requests take turns among them: its cap on event streams open at once, and reading back
// its own writes when list reads go to the streaming replica (DATABASE_READ_URL), which lags.

import { createClient } from '@agentline/sdk';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../src/db/engine/client.js';
import { openEventStream, type EventStreamReader } from './support/event-stream.js';
import { haproxyInstalled, startFleet, type Fleet } from './support/fleet.js';
import { createKey, createTenant, type Tenant } from './support/harness.js';
import {
  freshReplicatedDatabase,
  READ_ADMIN_URL,
  replicaConnection,
  type ReplicatedDatabase,
} from './support/replica.js';
import { loadRoutingFixture, type RoutingFixture } from './support/routing-fixture.js';
import { freshDatabaseUrl, insertTestEvents, onPostgres } from './support/test-database.js';

const PROCESSES = 3;
/** Sessions routed, each read back at once through the next process. */
const WRITES_THEN_READS = 200;
const METRICS_TOKEN = 'fleet-one-server-metrics-token';

/**
 * Each process's list reads the replica served, and those the primary served because the
 * replica had not caught up with the key's writes, from its own /metrics.
 */
const replicaReadsByProcess = (fleet: Fleet) =>
  Promise.all(
    fleet.servers.map(async (server) => {
      const text = await fetch(`${server.baseUrl}/metrics`, {
        headers: { Authorization: `Bearer ${METRICS_TOKEN}` },
      }).then((response) => response.text());
      const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)![1]);
      return {
        replica: value('agentline_replica_reads_total'),
        behind: value('agentline_replica_behind_reads_total'),
      };
    }),
  );

describe.runIf(onPostgres && haproxyInstalled)('a key’s stream cap through HAProxy', () => {
  const PER_KEY = 3;
  let db: Db;
  let acme: Tenant;
  let fleet: Fleet;

  beforeAll(async () => {
    const databaseUrl = await freshDatabaseUrl();
    db = createDb(databaseUrl);
    acme = await createTenant(db, 'Acme');
    fleet = await startFleet(
      { DATABASE_URL: databaseUrl, EVENT_STREAMS_PER_KEY: String(PER_KEY) },
      { processes: PROCESSES },
    );
  }, 120_000);

  afterAll(async () => {
    await fleet?.stop();
    await db?.close();
  });

  it('holds whichever processes the streams reach, and frees a closed one’s slot for any', async () => {
    const key = await createKey(db, acme.organizationId, ['EVENTS_READ']);
    const open = (): Promise<EventStreamReader> => openEventStream(fleet.baseUrl, { key });
    const held: EventStreamReader[] = [];
    for (let i = 0; i < PER_KEY; i += 1) held.push(await open());
    expect(held.map(({ status }) => status)).toEqual([200, 200, 200]);
    // Round robin: one stream on each process, each holding its connection through HAProxy.
    const connections = await Promise.all(
      [1, 2, 3].map(async (n) => Number((await fleet.serverStat(n)).scur)),
    );
    expect(connections).toEqual([1, 1, 1]);

    // One more, in turn on each process: every one counts the others' streams.
    for (let i = 0; i < PROCESSES; i += 1) {
      const extra = await open();
      expect(extra.status).toBe(429);
      expect(extra.headers.get('retry-after')).toBe('1');
      extra.close();
    }
    const other = await openEventStream(fleet.baseUrl, { key: acme.key });
    expect(other.status).toBe(200);
    other.close();

    // The first closes. HAProxy reads nothing more of a client whose request it has sent on, so
    // it sees the client gone only when the stream next writes to it (an event, or the
    // keep-alive every 15 s) and fails: then it closes the server's side, whose slot is free
    // for the next open, wherever HAProxy sends it.
    held[0]!.close();
    await held[0]!.ended;
    const closedAt = performance.now();
    let again = await open();
    for (let tries = 0; again.status === 429 && tries < 100; tries += 1) {
      await insertTestEvents(db, [
        { organizationId: acme.organizationId, timestamp: new Date().toISOString(), type: 'x' },
      ]);
      await new Promise((resolve) => setTimeout(resolve, 100));
      again = await open();
    }
    console.info(`freed after ${(performance.now() - closedAt).toFixed(0)} ms`);
    expect(again.status).toBe(200);
    const refused = await open();
    expect(refused.status).toBe(429);
    refused.close();
    for (const stream of [...held, again]) stream.close();
  });
});

describe.runIf(onPostgres && haproxyInstalled && READ_ADMIN_URL)(
  'reading its own writes through HAProxy, list reads on the replica',
  () => {
    let database: ReplicatedDatabase;
    let db: Db;
    let acme: Tenant;
    let fx: RoutingFixture;
    let replica: pg.Client;
    let fleet: Fleet;

    beforeAll(async () => {
      database = await freshReplicatedDatabase();
      db = createDb(database.primaryUrl);
      acme = await createTenant(db, 'Acme');
      fx = await loadRoutingFixture(db, acme.organizationId);
      replica = await replicaConnection(database.readUrl);
      fleet = await startFleet(
        {
          DATABASE_URL: database.primaryUrl,
          DATABASE_READ_URL: database.readUrl,
          METRICS_TOKEN,
        },
        { processes: PROCESSES },
      );
    }, 120_000);

    afterAll(async () => {
      await fleet?.stop();
      await replica?.end();
      await db?.close();
      await database?.drop();
    });

    it(`reads every session it routed in the events list: 0 stale of ${WRITES_THEN_READS}`, async () => {
      const client = createClient({ apiKey: acme.key, baseUrl: fleet.baseUrl });
      const before = await replicaReadsByProcess(fleet);
      let expected = (await client.events.list({ limit: 1 })).total_count ?? 0;
      const stale: number[] = [];
      for (let attempt = 0; attempt < WRITES_THEN_READS; attempt += 1) {
        // Routed through one process, read through the next: HAProxy takes them in turn.
        await client.sessions.route(fx.targets.main, {});
        expected += 1;
        const seen = (await client.events.list({ limit: 1 })).total_count;
        if (seen === null || seen === undefined || seen < expected) stale.push(attempt);
      }
      const reads = (await replicaReadsByProcess(fleet)).map(({ replica, behind }, p) => ({
        replica: replica - before[p]!.replica,
        behind: behind - before[p]!.behind,
      }));
      console.info(
        `${WRITES_THEN_READS} reads after a write through HAProxy, per process: ${reads.map(({ replica, behind }) => `${replica} from the replica, ${behind} from the primary while it was behind`).join('; ')}`,
      );
      expect(stale).toEqual([]);
      // Every process read lists, each read asking whether the replica had the key's writes.
      for (const { replica, behind } of reads) expect(replica + behind).toBeGreaterThan(0);
      const total = reads.reduce((sum, { replica, behind }) => sum + replica + behind, 0);
      expect(total).toBeGreaterThanOrEqual(WRITES_THEN_READS);
    }, 180_000);
  },
);
