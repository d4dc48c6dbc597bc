// Work gathered per turn of the event loop (gather-batches.ts), without a database: what gathers,
// what waits for a lane's batch in flight, and what every item is told when a run fails. Its users
// are tested through what they do: SQLite's group commit (db-write-batcher.test.ts), PostgreSQL's
// session routing (experiments-traffic.test.ts) and the kept list answers' version read
// (versioned-cache.test.ts).

import { describe, expect, it } from 'vitest';
import { gatherBatches } from '../src/db/engine/gather-batches.js';

describe('gatherBatches', () => {
  it('hands the items issued together to one asynchronous run and answers each', async () => {
    const batches: number[][] = [];
    const submit = gatherBatches(async (_db: object, items: number[]) => {
      batches.push(items);
      await new Promise((resolve) => setTimeout(resolve, 5));
      return items.map((n) =>
        n < 0
          ? { ok: false as const, error: new Error(`${n}`) }
          : { ok: true as const, value: n * 2 },
      );
    });
    const database = {};
    const results = await Promise.allSettled([1, -1, 3].map((n) => submit(database, n)));
    expect(batches).toEqual([[1, -1, 3]]);
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : 'rejected'))).toEqual([
      2,
      'rejected',
      6,
    ]);
    await submit(database, 4);
    expect(batches).toEqual([[1, -1, 3], [4]]);
  });

  it("runs a lane's items one batch at a time, and lanes side by side", async () => {
    const batches: string[][] = [];
    let inFlight = 0;
    let mostInFlight = 0;
    const releases: Array<() => void> = [];
    const submit = gatherBatches(
      async (_db: object, items: string[]) => {
        batches.push(items);
        inFlight += 1;
        mostInFlight = Math.max(mostInFlight, inFlight);
        await new Promise<void>((resolve) => releases.push(resolve));
        inFlight -= 1;
        return items.map((item) => ({ ok: true as const, value: item.toUpperCase() }));
      },
      { laneOf: (item) => item[0]! },
    );
    const database = {};
    const first = [submit(database, 'a1'), submit(database, 'b1')];
    await new Promise((resolve) => setImmediate(resolve));
    // Lane a's batch is in flight: its next items wait for it, lane b's batch runs beside it.
    expect(batches).toEqual([['a1'], ['b1']]);
    const second = [submit(database, 'a2'), submit(database, 'a3')];
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches).toHaveLength(2);
    releases.shift()!();
    releases.shift()!();
    expect(await Promise.all(first)).toEqual(['A1', 'B1']);
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches).toEqual([['a1'], ['b1'], ['a2', 'a3']]);
    releases.shift()!();
    expect(await Promise.all(second)).toEqual(['A2', 'A3']);
    expect(mostInFlight).toBe(2);
    // A lane with nothing in flight runs at once again.
    const third = submit(database, 'a4');
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches.at(-1)).toEqual(['a4']);
    releases.shift()!();
    expect(await third).toBe('A4');
  });

  it('gives every item the error when the run fails', async () => {
    const submit = gatherBatches(async (_db: object, _items: number[]) => {
      throw new Error('the database went away');
    });
    const database = {};
    const results = await Promise.allSettled([submit(database, 1), submit(database, 2)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
  });
});
