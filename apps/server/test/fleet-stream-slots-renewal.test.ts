// A process renews its streams' slots while they are open, so they outlive SLOT_TTL_MS; a dead
// process's slots stop counting once expired and are removed by a live process's renewal or by
// their key's next take; a process with no stream open has no renewal tick, so writes nothing.

import { sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Db } from '../src/db/engine/client.js';
import { takeStreamSlot } from '../src/db/repositories/event-stream-slots.js';
import { eventStreamSlots } from '../src/db/schema/sqlite.js';
import { StreamSlots } from '../src/runtime/fleet-stream-slots.js';
import { createTestDb, queryTestDb } from './support/test-database.js';

const SLOT_TTL_MS = 30_000;
const RENEW_MS = 10_000;
const PER_KEY = 2;

let db: Db;
let clock = 0;
const now = () => clock;

beforeAll(async () => {
  db = await createTestDb();
});

afterAll(async () => {
  await db?.close();
});

afterEach(() => {
  vi.useRealTimers();
});

async function slotRows(keyId: string): Promise<number> {
  const [row] = await queryTestDb<{ n: number | string }>(
    db,
    sql`SELECT COUNT(*) AS n FROM ${eventStreamSlots} WHERE ${eventStreamSlots.apiKeyId} = ${keyId}`,
  );
  return Number(row!.n);
}

/** Slots a process took and then died holding: never renewed, never released. */
async function deadProcessSlots(keyId: string, count: number): Promise<void> {
  for (let i = 0; i < count; i += 1) {
    const slot = await takeStreamSlot(db, keyId, {
      perKey: PER_KEY,
      now: clock,
      expiresAt: clock + SLOT_TTL_MS,
    });
    expect(slot).not.toBeNull();
  }
}

/** Moves the clock on by the renewal period and fires the renewal tick. */
function tick(): void {
  clock += RENEW_MS;
  vi.advanceTimersByTime(RENEW_MS);
}

describe('the stream slots of one process', () => {
  it('keeps an open stream’s slot past its lifetime and sweeps a dead process’s', async () => {
    clock = 1_000_000;
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const slots = new StreamSlots(db, PER_KEY, now);
    await deadProcessSlots('dead-key', PER_KEY);
    const held = await slots.take('live-key');
    expect(held).not.toBeNull();
    // Four renewals: 40 s, past both lifetimes; the dead process's slots go, the held one stays.
    for (let i = 0; i < 4; i += 1) tick();
    await expect.poll(() => slotRows('dead-key')).toBe(0);
    expect(await slotRows('live-key')).toBe(1);
    // Still held, the live key's slot counts: it may take one more and then none.
    expect(await slots.take('live-key')).not.toBeNull();
    expect(await slots.take('live-key')).toBeNull();
    await slots.close();
    expect(await slotRows('live-key')).toBe(0);
  });

  it('has no tick while it holds no slot; a take sweeps its key’s dead ones', async () => {
    clock = 2_000_000;
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const slots = new StreamSlots(db, PER_KEY, now);
    await deadProcessSlots('idle-key', PER_KEY);
    expect(await slots.take('idle-key')).toBeNull();
    expect(vi.getTimerCount()).toBe(0);
    for (let i = 0; i < 4; i += 1) tick();
    // Nothing was renewed or swept: no slot is held here.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await slotRows('idle-key')).toBe(PER_KEY);
    // Expired, the dead slots count for nothing: the key's take removes them and succeeds.
    const slot = await slots.take('idle-key');
    expect(slot).not.toBeNull();
    expect(await slotRows('idle-key')).toBe(1);
    expect(vi.getTimerCount()).toBe(1);
    slots.release(slot!);
    expect(vi.getTimerCount()).toBe(0);
    await slots.close();
  });
});
