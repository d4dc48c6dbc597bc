import { platformRecordsSchema } from '../../records/format.js';
import {
  createOrganization,
  findOrganization,
  type Organization,
} from '../../db/repositories/organizations.js';
import { summarizeLoad } from '../../records/load-result.js';
import { loadPlatformRecords } from '../../records/loader.js';
import { PERMISSIONS } from '../../vocabulary/permissions.js';
import { createKeyWithOwnRole } from '../../use-cases/api-keys.js';
import { UsageError } from '../cli-error.js';
import type { Command } from '../command.js';
import type { CommandContext } from '../context.js';
import { DEMO_RECORDS, demoEvents } from '../demo-data.js';
import { describeImport, importEventStream } from './events-import.js';
import { describeLoadSummary } from './load.js';

const DEFAULT_DEMO_EVENTS = 100_000;
const DEMO_ORGANIZATION = 'Demo Org';
/**
 * Events per transaction of the demo's import: larger than an import's default, since the demo
 * mostly runs before any server (the quick start), where larger batches fill the database in far
 * fewer writes, and still short enough a hold of SQLite's write lock for a server running beside
 * it to route through (cli/event-import.ts, DEFAULT_EVENT_BATCH_SIZE, says what a batch holds).
 * docs/benchmarks.md ("Figures behind the code") has the measurements.
 */
const DEMO_EVENT_BATCH_SIZE = 2000;

function eventCountFrom(raw: string | boolean | undefined): number {
  if (raw === undefined) return DEFAULT_DEMO_EVENTS;
  if (typeof raw !== 'string' || !/^\d+$/.test(raw) || Number(raw) > 10_000_000) {
    throw new UsageError(
      `--events must be a whole number from 0 to 10000000, got "${String(raw)}"`,
      `leave it out for ${DEFAULT_DEMO_EVENTS}`,
    );
  }
  return Number(raw);
}

/** "Demo Org", or "Demo Org 2", 3, ... when earlier demos took the name. */
async function createDemoOrganization(context: CommandContext): Promise<Organization> {
  const db = await context.db();
  for (let suffix = 1; ; suffix += 1) {
    const name = suffix === 1 ? DEMO_ORGANIZATION : `${DEMO_ORGANIZATION} ${suffix}`;
    if (!(await findOrganization(db, name))) return createOrganization(db, name);
  }
}

export const demoCommand: Command = {
  words: ['demo'],
  summary:
    'Create a demo organization with an admin key, realistic records, a draft experiment and events.',
  options: [['--events <n>', `how many events to generate (default ${DEFAULT_DEMO_EVENTS})`]],
  details: [
    'Prints the admin API key and three curl commands to stdout. Start the server (pnpm start) and paste them.',
  ],
  async run(context, values) {
    const eventCount = eventCountFrom(values.events);
    const db = await context.db();
    const organization = await createDemoOrganization(context);
    context.note(`created organization "${organization.name}" (id ${organization.id})`);

    const fullKey = await createKeyWithOwnRole(db, {
      organizationId: organization.id,
      roleName: 'admin',
      keyName: 'demo admin',
      permissions: PERMISSIONS,
    });

    const { records } = await loadPlatformRecords(
      db,
      organization.id,
      platformRecordsSchema.parse(DEMO_RECORDS),
    );
    context.note(`loaded records: ${describeLoadSummary(summarizeLoad(records))}`);

    const counts = await importEventStream(
      context,
      organization.id,
      {
        name: 'demo events',
        entries: demoEvents(eventCount, new Date(), records),
        size: eventCount,
      },
      DEMO_EVENT_BATCH_SIZE,
    );
    context.note(describeImport(counts));

    const baseUrl = `http://127.0.0.1:${context.config.port}`;
    context.note(
      `\nAdmin API key of "${organization.name}" (shown once), then requests to try once the server runs (pnpm start):`,
    );
    context.out(fullKey);
    for (const list of ['events', 'prompts', 'experiments']) {
      context.out(`curl -s -H 'Service-API-Key: ${fullKey}' '${baseUrl}/api/v1/${list}/?limit=5'`);
    }
    context.note(`\nThe console: ${baseUrl}/console/ (sign in with the key above)`);
  },
};
