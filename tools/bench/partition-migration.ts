// The upgrade to time partitions on PostgreSQL (migration 0014): `pnpm bench:partition-migration
// --database postgres://... [--events 1000000]`. Brings a new database up to the migration
// before, writes --events events of two organizations spread over a year with the triggers of
// the time (ids, hour counts), then times migrateDb: the attach's scan of the table and the
// builds of the two unique indexes, during which the events table is locked. Prints the time.
// Last line: `partition migration: N events in X s (R events/s)`.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createDb, type PostgresDb } from '../../apps/server/src/db/engine/client.js';
import { migrateDb } from '../../apps/server/src/db/engine/migrate.js';
import { createOrganization } from '../../apps/server/src/db/repositories/organizations.js';
import { migratePostgresThrough } from '../../apps/server/test/support/partial-migration.js';
import { createBenchDatabase } from './bench-database.js';

const { values } = parseArgs({
  options: {
    database: { type: 'string' },
    events: { type: 'string', default: '1000000' },
  },
});
if (!values.database) {
  console.error('bench:partition-migration needs --database postgres://... (PostgreSQL only)');
  process.exit(2);
}
const eventCount = Number(values.events);
/** Events per INSERT while building: each statement's hour counts are one upsert per row. */
const BUILD_BATCH = 100_000;

const directory = mkdtempSync(join(tmpdir(), 'agentline-bench-partition-migration-'));
const database = await createBenchDatabase(directory, values.database, 'partition_migration');
const db = createDb(database.url) as PostgresDb;
try {
  await migratePostgresThrough(db, '0013_event_counts');
  const organizations = [
    (await createOrganization(db, 'Acme')).id,
    (await createOrganization(db, 'Globex')).id,
  ];
  const built = performance.now();
  for (let start = 0; start < eventCount; start += BUILD_BATCH) {
    const count = Math.min(BUILD_BATCH, eventCount - start);
    // Server-side rows: a year of timestamps, a few categories and types, a description each.
    await db.pool.query(
      `INSERT INTO events (organization_id, timestamp, session_id, category, type, user_id,
                           description, attributes)
       SELECT ($1::int[])[1 + n % 2],
              to_char(timestamp '2025-11-01' + (n * interval '31 seconds'),
                      'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
              's-' || (n / 10), (ARRAY['session','llm','tool','message'])[1 + n % 4],
              'type-' || (n % 7), '+1415555' || lpad((n % 10000)::text, 4, '0'),
              'event ' || n || ' about an order', json_build_object('n', n)
       FROM generate_series($2::int, $3::int) AS n`,
      [organizations, start, start + count - 1],
    );
    console.log(`built ${start + count} of ${eventCount} events`);
  }
  await db.pool.query('VACUUM (ANALYZE) events');
  console.log(`built in ${((performance.now() - built) / 1000).toFixed(1)} s`);

  const started = performance.now();
  await migrateDb(db);
  const seconds = (performance.now() - started) / 1000;
  const { rows } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM events');
  if (rows[0]!.n !== eventCount) throw new Error(`${rows[0]!.n} events after the migration`);
  console.log(
    `partition migration: ${eventCount} events in ${seconds.toFixed(1)} s (${Math.round(eventCount / seconds)} events/s)`,
  );
} finally {
  await db.close();
  await database.drop();
  rmSync(directory, { recursive: true, force: true });
}
