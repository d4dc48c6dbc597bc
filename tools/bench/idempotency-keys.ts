// What storing a keyed session's answer costs by the form of its Idempotency-Key:
// `pnpm bench:idempotency-keys [--keys 200000] [--commits 2000]`. For random keys (UUIDv4, what
// crypto.randomUUID makes) and for the SDK's UUIDv7 keys in turn: a new SQLite database with the
// server's settings (openSqlite, migrations, prepareServerConnection), `--keys` answers stored
// first, then `--commits` group commits of 16 answers each through the code session routing uses
// (batchedWrite, storeAnswerWithWrite). Prints the time per stored answer; no HTTP, no session, so
// that only the key's row differs.

import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { idempotencyTimesOf, loadConfig } from '../../apps/server/src/config.js';
import {
  openSqlite,
  prepareServerConnection,
  type SqliteDb,
} from '../../apps/server/src/db/engine/client.js';
import { migrateDb } from '../../apps/server/src/db/engine/migrate.js';
import { runStepsOnSqlite } from '../../apps/server/src/db/engine/portable-sql.js';
import { batchedWrite } from '../../apps/server/src/db/engine/write-batcher.js';
import { storeAnswerWithWrite } from '../../apps/server/src/db/repositories/idempotency.js';
import { toWireSession } from '../../apps/server/src/wire/sessions.js';
import { newIdempotencyKey } from '../../packages/sdk/src/index.js';

const { values } = parseArgs({
  options: {
    keys: { type: 'string', default: '200000' },
    commits: { type: 'string', default: '2000' },
  },
});
const keys = Number(values.keys);
const commits = Number(values.commits);
for (const [name, value] of Object.entries({ keys, commits })) {
  if (!Number.isInteger(value) || value < 1)
    throw new Error(`--${name} takes a whole number, 1 or more`);
}
const SESSIONS_PER_COMMIT = 16;
// The server's defaults (IDEMPOTENCY_RETENTION_SECONDS, IDEMPOTENCY_LEASE_SECONDS).
const TIMES = idempotencyTimesOf(loadConfig({}));
// A routed session's answer, as the handler renders it.
const ANSWER = JSON.stringify(
  toWireSession({
    sessionId: randomUUID(),
    targetId: 1,
    agentId: 2,
    experimentId: 1,
    variantId: 3,
    createdAt: new Date().toISOString(),
  }),
);

function store(db: SqliteDb, key: string): Promise<boolean> {
  const write = {
    apiKeyId: 'bench',
    key,
    requestHash: 'f'.repeat(64),
    times: TIMES,
    stored: false,
  };
  return batchedWrite(db, () => runStepsOnSqlite(db, storeAnswerWithWrite(write, ANSWER)));
}

/** Stores `count` answers, 16 a commit; resolves with the milliseconds it took. */
async function storeMany(db: SqliteDb, count: number, newKey: () => string): Promise<number> {
  const started = performance.now();
  for (let done = 0; done < count; done += SESSIONS_PER_COMMIT) {
    const batch = Array.from({ length: Math.min(SESSIONS_PER_COMMIT, count - done) }, newKey);
    const stored = await Promise.all(batch.map((key) => store(db, key)));
    if (stored.includes(false)) throw new Error('a new key was refused as held');
  }
  return performance.now() - started;
}

const forms: Array<[string, () => string]> = [
  ['random (UUIDv4, crypto.randomUUID)', randomUUID],
  ["time-ordered (UUIDv7, the SDK's newIdempotencyKey)", () => newIdempotencyKey()],
];
console.log(
  `${keys} answers stored first, then ${commits} commits of ${SESSIONS_PER_COMMIT}; µs per stored answer`,
);
for (const [form, newKey] of forms) {
  const directory = mkdtempSync(join(tmpdir(), 'agentline-bench-keys-'));
  try {
    const db = openSqlite(join(directory, 'keys.db'));
    await migrateDb(db);
    prepareServerConnection(db);
    await storeMany(db, keys, newKey);
    const stores = commits * SESSIONS_PER_COMMIT;
    const ms = await storeMany(db, stores, newKey);
    console.log(`${form.padEnd(52)} ${((ms * 1000) / stores).toFixed(1).padStart(7)}`);
    await db.close();
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}
