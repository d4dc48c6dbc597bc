// The writer process of the webhooks benchmark (webhooks.ts): writes events at a steady rate,
// spread evenly over the organizations given, each carrying the time it was written
// (`attributes.written_at`, epoch ms), so a webhook receiver can tell how long after its write it
// arrived. `node --import tsx tools/bench/event-writer.ts <database url> <organization
// id>[,<id>...] <per second> <seconds>`

import { createDb } from '../../apps/server/src/db/engine/client.js';
import { insertTestEvents } from '../../apps/server/test/support/test-database.js';

const [databaseUrl, organizations, perSecond, seconds] = process.argv.slice(2);
const organizationIds = organizations!.split(',').map(Number);
const db = createDb(databaseUrl!);
/** Ten writes a second: each commits a tenth of the second's events. */
const WRITES_PER_SECOND = 10;
const perWrite = Math.max(1, Math.round(Number(perSecond) / WRITES_PER_SECOND));
const started = Date.now();
let written = 0;
for (let tick = 0; tick < Number(seconds) * WRITES_PER_SECOND; tick += 1) {
  const due = started + (tick * 1000) / WRITES_PER_SECOND;
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - Date.now())));
  const writtenAt = Date.now();
  const rows = Array.from({ length: perWrite }, (_, i) => ({
    organizationId: organizationIds[(written + i) % organizationIds.length]!,
    timestamp: new Date(writtenAt).toISOString(),
    sessionId: `bench-session-${(written + i) % 1000}`,
    category: 'bench',
    type: 'bench-written',
    attributes: { written_at: writtenAt },
  }));
  await insertTestEvents(db, rows);
  written += perWrite;
}
await db.close();
process.stdout.write(`${written}\n`);
