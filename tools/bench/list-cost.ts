// What a varied list request costs inside the server, with no socket, thread or other client
// beside it: `pnpm bench list-cost [--requests 6000]` (README.md's table of commands says what it
// asks and prints). The first quarter warms up.

import { createApp } from '../../apps/server/src/app.js';
import { createDb } from '../../apps/server/src/db/engine/client.js';
import { listEvents } from '../../apps/server/src/runtime/event-list-memory.js';
import { EVENT_LIST } from '../../apps/server/src/domain/events.js';
import { parseListQuery } from '../../apps/server/src/domain/list-query.js';
import { eventsList } from '../../apps/server/src/routes/events/events.routes.js';
import { cursorSigner } from '../../apps/server/src/runtime/cursor-signer.js';
import { createDayTenants } from './day-tenants.js';
import { listPath, randomListQuery, type ListQuery } from './day-queries.js';
import { options, seeded, withBenchDatabase } from './harness.js';
import { Latencies, columns } from './report.js';

/** The shape of an events query's search: what decides which index (or none) reads it. */
function eventsShape({ query }: Extract<ListQuery, { resource: 'events' }>): string {
  const fields = query.search_fields ?? [];
  if (fields.length === 0) return 'no search';
  if (fields.length > 1) return 'two searches';
  const value = query.search_field_values![0]!;
  switch (fields[0]) {
    case 'category':
    case 'type':
      return 'category or type';
    case 'description':
      return value.startsWith('#') ? 'description, a number' : 'description, a word';
    default:
      return 'an id (session, conversation, user)';
  }
}

const us = (ms: number) => (ms * 1000).toFixed(0);
const columnsOf = columns(56, 6, 6, 6, 6);
const row = (name: string, latencies: Latencies) =>
  columnsOf(
    name,
    us(latencies.mean()),
    us(latencies.percentile(50)),
    us(latencies.percentile(90)),
    latencies.count,
  );
const header = columnsOf('µs per request', 'mean', 'p50', 'p90', 'n');
const tally = (map: Map<string, Latencies>, name: string) => {
  let latencies = map.get(name);
  if (!latencies) map.set(name, (latencies = new Latencies()));
  return latencies;
};

export async function run(args: readonly string[]): Promise<void> {
  const { requests } = options(args, { requests: 6000 });
  if (!Number.isInteger(requests) || requests < 100) {
    throw new Error('--requests takes a whole number of at least 100');
  }
  const warmUp = Math.floor(requests / 4);
  // Always SQLite: the app reads in process, with no server or pool between.
  await withBenchDatabase('list-cost', undefined, async ({ url }) => {
    const tenants = await seeded(url, (setup) => createDayTenants(setup, 20, 10_000));
    const db = createDb(url);
    const app = createApp({ db });

    const byResource = new Map<string, Latencies>();
    for (let i = 0; i < requests; i += 1) {
      const tenant = tenants[i % tenants.length]!;
      const list = randomListQuery(tenant.organizationId);
      const started = performance.now();
      await (await app.request('/healthz')).text();
      const healthzDone = performance.now();
      const answer = await app.request(listPath(list), {
        headers: { 'Service-API-Key': tenant.dashboardKey },
      });
      const body = await answer.text();
      const listDone = performance.now();
      if (answer.status !== 200) throw new Error(`${listPath(list)}: ${answer.status} ${body}`);
      if (i < warmUp) continue;
      tally(byResource, '/healthz').add(healthzDone - started);
      tally(byResource, `list ${list.resource}`).add(listDone - healthzDone);
      tally(byResource, 'varied lists, all').add(listDone - healthzDone);
    }

    const signer = await cursorSigner(db);
    const querySchema = eventsList.request.query;
    const byShape = new Map<string, Latencies>();
    for (let i = 0, read = 0; read < requests / 2; i += 1) {
      const tenant = tenants[i % tenants.length]!;
      const list = randomListQuery(tenant.organizationId);
      if (list.resource !== 'events') continue;
      read += 1;
      const params = querySchema.parse(
        Object.fromEntries(
          Object.entries(list.query).map(([name, value]) => [
            name,
            Array.isArray(value) ? value.map(String) : String(value),
          ]),
        ),
      );
      const query = await parseListQuery(EVENT_LIST, params, tenant.organizationId, signer);
      const started = performance.now();
      await listEvents(db, tenant.organizationId, query);
      const ms = performance.now() - started;
      if (read <= warmUp / 2) continue;
      tally(byShape, `events read alone, ${eventsShape(list)}`).add(ms);
      tally(byShape, 'events read alone, all').add(ms);
    }
    await db.close();

    console.log(`in process, one request at a time, ${requests - warmUp} counted:\n${header}`);
    for (const [name, latencies] of [...byResource, ...byShape]) console.log(row(name, latencies));
    const mean = (map: Map<string, Latencies>, name: string) => us(map.get(name)!.mean());
    console.log(
      `list-cost: healthz ${mean(byResource, '/healthz')} us, varied lists ${mean(byResource, 'varied lists, all')} us, events read alone ${mean(byShape, 'events read alone, all')} us`,
    );
  });
}
