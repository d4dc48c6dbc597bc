// Pages by number at every depth of a large events list: `pnpm bench deep-pages [--events
// 10000000] [--samples 200] [--database postgres://...]`; docs/benchmarks.md says which pages.

import { createClient, type EventListQuery } from '../../packages/sdk/src/index.js';
import { organizationWithEvents } from './bench-events.js';
import { benchTenant } from './bench-tenant.js';
import { options, withBenchDatabase, withServer } from './harness.js';
import { Latencies } from './report.js';

const LIMIT = 25;

export async function run(args: readonly string[]): Promise<void> {
  const values = options(args, { events: 10_000_000, samples: 200, database: undefined });
  const { events: eventCount, samples } = values;
  await withBenchDatabase('deep-pages', values.database, async (database) => {
    const tenant = await organizationWithEvents(database, eventCount, (db) =>
      benchTenant(db, 'Bench'),
    );
    await withServer(database.url, {}, (server) =>
      pages(server.baseUrl, tenant.key, database.kind),
    );
  });

  async function pages(baseUrl: string, key: string, kind: string): Promise<void> {
    const client = createClient({ apiKey: key, baseUrl });
    const shapes: Array<[string, EventListQuery]> = [
      ['default order', {}],
      ['category "tool"', { search_fields: ['category'], search_field_values: ['tool'] }],
    ];
    console.log(
      `pages of ${LIMIT} on ${kind}: ${eventCount} events, ${samples} different pages per depth, one request at a time`,
    );
    console.log('| shape | depth (pages) | p50 ms | p99 ms | max ms | p99 / first pages p99 |');
    console.log('|---|---|---|---|---|---|');
    for (const [label, query] of shapes) {
      const { total_count: total } = await client.events.list({ ...query, limit: LIMIT });
      if (total == null) throw new Error(`${label}: the list gave no total_count`);
      const lastPage = Math.ceil(total / LIMIT) - 1;
      const middle = Math.floor(lastPage / 2) - Math.floor(samples / 2);
      const depths: Array<[string, number]> = [
        ['first', 0],
        ['middle', middle],
        ['last', lastPage - samples + 1],
      ];
      let firstP99 = 0;
      for (const [depth, from] of depths) {
        const times = new Latencies();
        for (let page = from; page < from + samples; page += 1) {
          const started = performance.now();
          const answer = await client.events.list({ ...query, limit: LIMIT, page });
          times.add(performance.now() - started);
          if (answer.items.length === 0 || answer.total_count !== total) {
            throw new Error(`${label}, page ${page}: ${answer.items.length} items of ${total}`);
          }
        }
        const p99 = times.percentile(99);
        if (depth === 'first') firstP99 = p99;
        console.log(
          `| ${label} (${total}) | ${depth} (${from}-${from + samples - 1}) | ${times.percentile(50).toFixed(1)} | ${p99.toFixed(1)} | ${times.percentile(100).toFixed(1)} | ${(p99 / firstP99).toFixed(2)} |`,
        );
      }
    }
  }
}
