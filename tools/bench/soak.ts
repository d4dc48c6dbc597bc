// Soak: `pnpm bench soak [--seconds 60] [--warm-up-seconds 10] [--workers 16]` (CI runs
// `--seconds 15`). Mixed traffic (lists, whole experiment life cycles, session routing, bad input)
// against the real server process; requests, errors, latency and the server's memory over time.
// Exits non-zero on any 5xx or network error, or when memory keeps growing after warm-up.

import { benchRoutingTenant } from './bench-tenant.js';
import { options, seeded, withBenchDatabase, withServer } from './harness.js';
import { Latencies } from './report.js';

// After warm-up the server's RSS may move within this much of its post-warm-up level.
const ALLOWED_RSS_GROWTH = 1.25;

/** A worker's reads by its step's number modulo 10; step 0 runs an experiment, the rest route. */
const READS: Partial<Record<number, string>> = {
  1: '/api/v1/events/?limit=25',
  2: '/api/v1/events/?limit=25',
  3: '/api/v1/events/?search_fields=type&search_field_values=session-started&limit=10',
  4: '/api/v1/prompts/',
  5: '/api/v1/experiments/?order_by=id&order_by_direction=desc',
  // Deliberately bad input: a 4xx is expected and counted, never an error.
  6: '/api/v1/events/?limit=5000',
};

export async function run(args: readonly string[]): Promise<void> {
  const values = options(args, {
    seconds: 60,
    // The bounded caches fill in the first ~13 s of this traffic (RSS 240 -> 340 MiB on the
    // 2-core VM, then flat for a minute), so memory is judged only after them.
    'warm-up-seconds': 10,
    workers: 16,
  });
  const { seconds: SECONDS, workers: WORKERS, 'warm-up-seconds': WARM_UP_SECONDS } = values;
  const tally = { requests: 0, by4xx: 0, failures: [] as string[], latencies: new Latencies() };
  const rss: Array<{ second: number; mib: number }> = [];
  let started = 0;
  await withBenchDatabase('soak', undefined, async ({ url }) => {
    // Four agents, and a target of its own for each worker.
    const tenant = await seeded(url, (db) =>
      benchRoutingTenant(db, 'Soak', { moreAgents: 2, targets: WORKERS }),
    );
    await withServer(url, {}, async (server) => {
      const headers = { 'Service-API-Key': tenant.key, 'Content-Type': 'application/json' };
      const agentIds = Object.values(tenant.agentIds);
      /** The answer's JSON (only an experiment's `id` is read), or null when no answer came. */
      async function call(
        method: string,
        path: string,
        body?: unknown,
      ): Promise<{ id?: number } | null> {
        const sent = performance.now();
        try {
          const res = await fetch(`${server.baseUrl}${path}`, {
            method,
            headers,
            body: body === undefined ? undefined : JSON.stringify(body),
          });
          const json = (await res.json()) as { id?: number };
          tally.latencies.add(performance.now() - sent);
          tally.requests += 1;
          if (res.status >= 500)
            tally.failures.push(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
          else if (res.status >= 400) tally.by4xx += 1;
          return json;
        } catch (error) {
          tally.requests += 1;
          tally.failures.push(`${method} ${path}: ${(error as Error).message}`);
          return null;
        }
      }

      /** One worker owns one target, so its experiment life cycles never collide with another's. */
      async function worker(index: number, deadline: number): Promise<void> {
        const targetId = tenant.targetIds[index % tenant.targetIds.length]!;
        let n = 0;
        while (Date.now() < deadline) {
          n += 1;
          const read = READS[n % 10];
          if (read) {
            await call('GET', read);
          } else if (n % 10 === 0) {
            const experiment = await call('POST', '/api/v1/experiments/', {
              name: `soak ${index}-${n}`,
              target_id: targetId,
              variants: [
                { name: 'a', weight: 60, is_control: true, agent_id: agentIds[0] },
                { name: 'b', weight: 40, agent_id: agentIds[1 + (n % 3)] },
              ],
            });
            if (!experiment?.id) continue;
            await call('POST', `/api/v1/experiments/${experiment.id}/start`);
            for (let i = 0; i < 5; i += 1) {
              await call('POST', `/api/v1/channels/targets/${targetId}/sessions`, {
                user_id: `u-${n}-${i}`,
              });
            }
            await call('GET', `/api/v1/experiments/${experiment.id}/results`);
            await call('POST', `/api/v1/experiments/${experiment.id}/stop`);
            await call('DELETE', `/api/v1/experiments/${experiment.id}`);
          } else {
            await call('POST', `/api/v1/channels/targets/${targetId}/sessions`, {
              user_id: `caller-${n % 50}`,
            });
          }
        }
      }

      started = Date.now();
      const sampler = setInterval(() => {
        rss.push({ second: Math.round((Date.now() - started) / 1000), mib: server.rssMiB() });
      }, 1000);
      try {
        const deadline = started + (WARM_UP_SECONDS + SECONDS) * 1000;
        await Promise.all(Array.from({ length: WORKERS }, (_, i) => worker(i, deadline)));
      } finally {
        clearInterval(sampler);
      }
    });
  });

  const percentile = (p: number) => tally.latencies.percentile(p) || 0;
  const afterWarmUp = rss.filter((s) => s.second >= WARM_UP_SECONDS);
  const baseline = afterWarmUp[0]?.mib ?? 0;
  const peak = Math.max(...afterWarmUp.map((s) => s.mib));
  const elapsed = (Date.now() - started) / 1000;

  console.log(
    `soak: ${WARM_UP_SECONDS} s warm-up + ${SECONDS} s measured, ${WORKERS} workers, server on 127.0.0.1`,
  );
  console.log(
    `requests ${tally.requests} (${Math.round(tally.requests / elapsed)}/s), 4xx ${tally.by4xx}, errors (5xx or network) ${tally.failures.length}`,
  );
  console.log(
    `latency p50 ${percentile(50).toFixed(1)} ms, p99 ${percentile(99).toFixed(1)} ms, max ${percentile(100).toFixed(1)} ms`,
  );
  console.log(
    `server RSS MiB by second: ${rss
      .filter((_, i) => i % Math.max(1, Math.floor(rss.length / 12)) === 0)
      .map((s) => `${s.second}s=${s.mib.toFixed(0)}`)
      .join(' ')}`,
  );
  console.log(
    `RSS after warm-up: ${baseline.toFixed(0)} MiB, peak ${peak.toFixed(0)} MiB (allowed up to ${(baseline * ALLOWED_RSS_GROWTH).toFixed(0)})`,
  );

  const failed = [
    tally.failures.length > 0 &&
      `FAILED: ${tally.failures.length} requests failed, first: ${tally.failures.slice(0, 3).join(' | ')}`,
    peak > baseline * ALLOWED_RSS_GROWTH && 'FAILED: the server kept growing after warm-up',
  ].filter((line) => line !== false);
  for (const line of failed) console.error(line);
  process.exit(failed.length > 0 ? 1 : 0);
}
