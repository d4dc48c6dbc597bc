// The organizations of the day benchmark (day.ts), each as a customer's would be on a working
// day: agents and prompts, a web chat target with a running experiment and two stopped ones
// before it, a year of events, and two keys scoped as in production: the router's (routing
// only) and the dashboard's (reading only).

import type { Db } from '../../apps/server/src/db/engine/client.js';
import { createClient, type Experiment } from '../../packages/sdk/src/index.js';
import { buildEvents } from './bench-events.js';
import { benchRoutingTenant, startSplitExperiment, newKey } from './bench-tenant.js';

/** Agents (each with a prompt of its own) beyond the experiment's two. */
const MORE_AGENTS = 10;

/** `count` organizations named `Day 0`..., with `eventsPerOrganization` events each. */
export async function createDayTenants(db: Db, count: number, eventsPerOrganization: number) {
  const tenants = [];
  for (let i = 0; i < count; i += 1) {
    const name = `Day ${i}`;
    const tenant = await benchRoutingTenant(db, name, { moreAgents: MORE_AGENTS });
    const key = newKey.bind(null, db, tenant.organizationId);
    tenants.push({
      ...tenant,
      name,
      routerKey: await key('router', ['SESSIONS_WRITE']),
      dashboardKey: await key('dashboard', ['EVENTS_READ', 'PROMPTS_READ', 'CHANNELS_READ']),
    });
  }
  const ids = tenants.map((t) => t.organizationId);
  await buildEvents(db, ids, eventsPerOrganization);
  return tenants;
}

export type DayTenant = Awaited<ReturnType<typeof createDayTenants>>[number];

/**
 * Through the server at `baseUrl`: two experiments run and stopped on each tenant's target, then
 * the one that runs through the day; the first tenant's ends by itself at `plannedEndAt`.
 * Returns that one.
 */
export async function startDayExperiments(
  tenants: readonly DayTenant[],
  baseUrl: string,
  plannedEndAt: Date,
): Promise<Experiment> {
  let planned: Experiment | undefined;
  for (const [index, tenant] of tenants.entries()) {
    const client = createClient({ apiKey: tenant.key, baseUrl });
    for (const name of ['spring test', 'summer test']) {
      const earlier = await startSplitExperiment(client, tenant, name);
      await client.experiments.stop(earlier.id);
    }
    const today = await startSplitExperiment(
      client,
      tenant,
      'today',
      index === 0 ? { end_at: plannedEndAt.toISOString() } : {},
    );
    if (index === 0) planned = today;
  }
  return planned!;
}
