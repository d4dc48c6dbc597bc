// What the event stream's resume tokens cost: `pnpm bench:resume-tokens [--events 1000000]`.
// Makes the tokens of `--events` consecutive event ids of one organization through
// ResumeTokens (db/repositories/resume-tokens.ts) in batches of 1,000, as the feed hands them to
// the stream, beside the decimal ids they replace and a cipher set up for every token, then reads
// 100,000 of them back. A new SQLite database holds the secret; no HTTP.

import { createCipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openSqlite } from '../../apps/server/src/db/engine/client.js';
import { migrateDb } from '../../apps/server/src/db/engine/migrate.js';
import { resumeTokensOf } from '../../apps/server/src/db/repositories/resume-tokens.js';

const { values } = parseArgs({ options: { events: { type: 'string', default: '1000000' } } });
const events = Number(values.events);
if (!Number.isInteger(events) || events < 1000) {
  throw new Error('--events takes a whole number, 1000 or more');
}
const BATCH = 1000;
const ORGANIZATION = 7;
const FIRST_ID = 123_456_789;

function nsPerToken(label: string, run: () => void): void {
  run(); // warm-up
  const began = process.hrtime.bigint();
  run();
  const ns = Number(process.hrtime.bigint() - began) / events;
  console.log(`${label.padEnd(44)} ${ns.toFixed(0).padStart(6)} ns per token`);
}

const batches = Array.from({ length: events / BATCH }, (_, batch) =>
  Array.from({ length: BATCH }, (_, index) => FIRST_ID + batch * BATCH + index),
);

const dir = mkdtempSync(join(tmpdir(), 'agentline-bench-tokens-'));
const db = openSqlite(join(dir, 'bench.db'));
try {
  await migrateDb(db);
  const tokens = resumeTokensOf(db);
  await tokens.ready();
  let sink = 0;
  nsPerToken('decimal id (what tokens were)', () => {
    for (const ids of batches) for (const id of ids) sink += String(id).length;
  });
  nsPerToken('ResumeTokens.make, kept cipher, 1,000 a call', () => {
    for (const ids of batches) sink += tokens.make(ORGANIZATION, ids).length;
  });
  nsPerToken('ResumeTokens.make, one token a call', () => {
    for (const ids of batches) for (const id of ids) sink += tokens.make(ORGANIZATION, [id]).length;
  });
  const secret = randomBytes(32);
  nsPerToken('HKDF and a new cipher for every token', () => {
    const block = Buffer.alloc(16);
    for (const ids of batches) {
      for (const id of ids) {
        block.writeUInt32BE(id >>> 0, 4);
        const key = Buffer.from(hkdfSync('sha256', secret, 'bench', 'organization 7', 16));
        const cipher = createCipheriv('aes-128-ecb', key, null);
        cipher.setAutoPadding(false);
        sink += cipher.update(block).toString('base64url').length;
      }
    }
  });
  const sample = tokens.make(ORGANIZATION, batches[0]!);
  const reads = 100_000;
  const began = process.hrtime.bigint();
  for (let index = 0; index < reads; index += 1) {
    sink += tokens.position(ORGANIZATION, sample[index % BATCH]!) ?? 0;
  }
  const ns = Number(process.hrtime.bigint() - began) / reads;
  console.log(
    `${'ResumeTokens.position (a Last-Event-ID)'.padEnd(44)} ${ns.toFixed(0).padStart(6)} ns per token`,
  );
  if (sink === 0) console.log('(nothing measured)');
} finally {
  db.sqlite.close();
  rmSync(dir, { recursive: true, force: true });
}
