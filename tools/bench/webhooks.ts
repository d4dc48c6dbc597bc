// Webhook delivery under load: `pnpm bench webhooks [--rate 1000] [--seconds 60]
// [--organizations 10] [--endpoints 5] [--answer-ms 50] [--stuck 1] [--database postgres://...]`.
// The writer is event-writer.ts, the receivers webhook-receivers.ts; what the options do and what
// it prints: docs/benchmarks.md and README.md's table of commands.

import { execFile, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  cpuAccount,
  endedChildrenSeconds,
  namedBackendSeconds,
  ownSeconds,
  postgresSeconds,
  processTreeSeconds,
  threadsStartedSince,
  ticksSinceBoot,
} from './cpu-accounting.js';
import { createClient, newIdempotencyKey } from '../../packages/sdk/src/index.js';
import { listPoolName } from '../../apps/server/src/db/engine/client.js';
import { WEBHOOKS_APPLICATION_NAME } from '../../apps/server/src/runtime/webhooks/delivery-thread.js';
import { benchRoutingTenant, benchTenant, randomCaller } from './bench-tenant.js';
import { listPath, randomListQuery } from './day-queries.js';
import { options, seeded, sleep, withBenchDatabase, withServer } from './harness.js';
import { TABLE_HEADER, formatRow, load, type LoadResult } from './load.js';

const DRAIN_LIMIT_MS = 60_000;
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Node's arguments to run this folder's `script` under tsx, from the repository's root. */
const script = (name: string) => ['--import', 'tsx', `tools/bench/${name}`];

/** What webhook-receivers.ts reports; its percentiles null without a message. */
type ReceiverReport = Record<'p50' | 'p99' | 'max', number | null> &
  Record<'delivered' | 'duplicates' | 'stuckAttempts' | 'fewestPerEndpoint', number>;

export async function run(args: readonly string[]): Promise<void> {
  const values = options(args, {
    rate: 1000,
    seconds: 60,
    organizations: 10,
    endpoints: 5,
    'answer-ms': 50,
    stuck: 1,
    database: undefined,
  });
  const {
    rate,
    seconds,
    organizations: organizationCount,
    endpoints: endpointsPerOrganization,
    stuck: stuckEndpoints,
  } = values;
  await withBenchDatabase('webhooks', values.database, async (database) => {
    const { router, tenants } = await seeded(database.url, async (db) => {
      const first = await benchRoutingTenant(db, 'Webhooks 0');
      const all: Array<{ organizationId: number; key: string }> = [first];
      for (let i = 1; i < organizationCount; i += 1) {
        all.push(await benchTenant(db, `Webhooks ${i}`));
      }
      return { router: first, tenants: all };
    });
    const env = { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true' };
    await withServer(database.url, env, async (server) => {
      const receivers = spawn(
        process.execPath,
        [...script('webhook-receivers.ts'), String(values['answer-ms'])],
        { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] },
      );
      const receiverLines = createInterface({ input: receivers.stdout })[Symbol.asyncIterator]();
      const receiverLine = async () => {
        const line = await receiverLines.next();
        if (line.done) throw new Error('the receivers ended');
        return line.value;
      };
      const receiverUrl = `http://127.0.0.1:${(await receiverLine()).split(' ')[1]}`;

      /** The writer is costed once it has ended, as a child this process waited for. */
      const cpu = cpuAccount({
        server: () => processTreeSeconds(server.child.pid!),
        database: await postgresSeconds(database.kind === 'postgres' ? database.url : undefined),
        receivers: () => processTreeSeconds(receivers.pid!),
        writer: endedChildrenSeconds,
        generator: ownSeconds,
      });

      async function receiverReport(): Promise<ReceiverReport> {
        receivers.stdin.write('report\n');
        return JSON.parse(await receiverLine()) as ReceiverReport;
      }

      /** An endpoint of `key`'s organization for the writer's events, through the SDK. */
      const createEndpoint = (key: string, url: string) =>
        createClient({ apiKey: key, baseUrl: server.baseUrl }).webhooks.create({
          url,
          search_fields: ['type'],
          search_field_values: ['bench-written'],
          message_types: ['event'],
        });

      /**
       * Lists and session routing of the first organization, while the writer writes: the lists
       * are the day's varied ones (day-queries.ts), each request another query, so no kept answer
       * stands in for a read.
       */
      async function probes(runSeconds: number) {
        const [list, routing] = await Promise.all([
          load({
            url: `${server.baseUrl}/api/v1/events/`,
            connections: 4,
            seconds: runSeconds,
            headers: { 'Service-API-Key': router.key },
            requestOf: () => ({ path: listPath(randomListQuery(router.organizationId)) }),
          }),
          load({
            url: `${server.baseUrl}/api/v1/channels/targets/${router.targetId}/sessions`,
            connections: 4,
            seconds: runSeconds,
            // As the SDK sends it: a JSON body, with a new Idempotency-Key each.
            method: 'POST',
            headers: { 'Service-API-Key': router.key, 'Content-Type': 'application/json' },
            requestOf: () => ({
              body: JSON.stringify({ user_id: randomCaller() }),
              headers: { 'Idempotency-Key': newIdempotencyKey() },
            }),
          }),
        ]);
        return { list, routing };
      }

      /** The writer process and the probes beside it: events written, when it ended, probes. */
      async function phase() {
        const writing = promisify(execFile)(
          process.execPath,
          [
            ...script('event-writer.ts'),
            database.url,
            tenants.map((tenant) => tenant.organizationId).join(','),
            String(rate),
            String(seconds + 2),
          ],
          { cwd: ROOT },
        ).then(({ stdout }) => ({ written: Number(stdout.trim()), writerEnded: Date.now() }));
        await sleep(1000);
        const measured = await probes(seconds);
        return { ...(await writing), ...measured };
      }

      // What delivery itself costs: the webhook thread, which the server starts once an endpoint
      // exists (the only thread it starts then), and on PostgreSQL that thread's connections.
      let webhookThread = () => 0;
      const webhookBackends =
        database.kind === 'postgres'
          ? await namedBackendSeconds(database.url, [
              WEBHOOKS_APPLICATION_NAME,
              listPoolName(WEBHOOKS_APPLICATION_NAME),
            ])
          : undefined;
      const delivery = cpuAccount({
        thread: () => webhookThread(),
        connections: () => webhookBackends?.seconds() ?? 0,
      });
      // A failed sample is made up by the next one; the last one is awaited.
      const sampleBackends = setInterval(
        () => void webhookBackends?.sample().catch(() => {}),
        1000,
      );
      try {
        cpu.take();
        const without = await phase();
        const spentWithout = cpu.take();

        webhookThread = threadsStartedSince(server.child.pid!, ticksSinceBoot());
        for (const [index, tenant] of tenants.entries()) {
          for (let e = 0; e < endpointsPerOrganization; e += 1) {
            await createEndpoint(tenant.key, `${receiverUrl}/ok/${index}-${e}`);
          }
        }
        for (let e = 0; e < stuckEndpoints; e += 1) {
          await createEndpoint(router.key, `${receiverUrl}/stuck/${e}`);
        }
        cpu.take();
        delivery.take();
        const rssIdle = server.rssMiB();
        let rssPeak = rssIdle;
        const rssTimer = setInterval(() => (rssPeak = Math.max(rssPeak, server.rssMiB())), 500);
        const withWebhooks = await phase();
        const expected = withWebhooks.written * endpointsPerOrganization;
        const { writerEnded } = withWebhooks;
        let report = await receiverReport();
        while (report.delivered < expected && Date.now() - writerEnded < DRAIN_LIMIT_MS) {
          await sleep(250);
          report = await receiverReport();
        }
        const drainSeconds = (Date.now() - writerEnded) / 1000;
        clearInterval(rssTimer);
        const spentWith = cpu.take();
        await webhookBackends?.sample();
        const delivering = delivery.take();
        const perMessageMs =
          ((delivering.thread + delivering.connections) / Math.max(1, report.delivered)) * 1000;

        console.log(
          `webhooks on ${database.kind === 'postgres' ? 'PostgreSQL' : 'SQLite'}: ${organizationCount} organizations x ${endpointsPerOrganization} endpoints (+${stuckEndpoints} that never answer), writer ${rate} events/s for ${seconds + 2} s, receivers answer in ${values['answer-ms']} ms`,
        );
        console.log(
          `delivered ${report.delivered} of ${expected} messages (${report.duplicates} twice; every endpoint got at least ${report.fewestPerEndpoint}), the last ${drainSeconds.toFixed(1)} s after the writer stopped; the endpoints that never answer had ${report.stuckAttempts} attempts`,
        );
        console.log(
          `delivery delay (event written to message received): p50 ${report.p50} ms, p99 ${report.p99} ms, max ${report.max} ms`,
        );
        console.log(`server RSS: ${rssIdle.toFixed(0)} MiB before, ${rssPeak.toFixed(0)} MiB peak`);
        console.log(
          `core-seconds without webhooks / with them (the drain included): ${Object.keys(spentWith)
            .map((name) => {
              const key = name as keyof typeof spentWith;
              return `${name} ${spentWithout[key].toFixed(1)} / ${spentWith[key].toFixed(1)}`;
            })
            .join(', ')}`,
        );
        console.log(
          `delivery's own core-seconds: the webhook thread ${delivering.thread.toFixed(1)}, its database connections ${webhookBackends ? delivering.connections.toFixed(1) : '- (SQLite: in the thread)'}; ${perMessageMs.toFixed(3)} core-ms per delivered message`,
        );
        console.log(TABLE_HEADER);
        for (const [label, result] of [
          ['varied lists, no webhooks', without.list],
          ['varied lists, webhooks', withWebhooks.list],
          ['session routing, no webhooks', without.routing],
          ['session routing, webhooks', withWebhooks.routing],
        ] as const) {
          console.log(formatRow(label, result));
        }
        // autocannon reports whole milliseconds: a p99 under one reads as 0.
        const ratio = (beside: LoadResult, alone: LoadResult) =>
          Math.max(1, beside.p99Ms) / Math.max(1, alone.p99Ms);
        const listRatio = ratio(withWebhooks.list, without.list);
        const routingRatio = ratio(withWebhooks.routing, without.routing);
        console.log(
          `webhooks: delivered ${report.delivered} of ${expected}, p99 ${report.p99} ms, list p99 ratio ${listRatio.toFixed(2)}, routing p99 ratio ${routingRatio.toFixed(2)}, delivery core-ms per message ${perMessageMs.toFixed(3)}`,
        );
      } finally {
        clearInterval(sampleBackends);
        await webhookBackends?.close();
        receivers.stdin.end();
      }
    });
  });
}
