// The bounds on in-memory caches (prepared SQLite statements, cached counts, kept answers, the
// capped experiments of routed targets): a full cache drops the entry used longest ago, never the
// one just used.

import { expect, it } from 'vitest';
import { remember } from '../src/db/engine/caches.js';
import { ByteBoundedLru, ENTRY_OVERHEAD_BYTES, stringBytes } from '../src/runtime/kept-answers.js';
import type { PostgresDb } from '../src/db/engine/client.js';
import {
  knownCappedExperiments,
  rememberCappedExperiments,
  targetKey,
} from '../src/use-cases/routing/capped-targets.js';

it('keeps at most the limit, dropping the entry used longest ago', () => {
  const cache = new Map<string, number>();
  for (const [key, value] of [
    ['a', 1],
    ['b', 2],
    ['c', 3],
  ] as const)
    remember(cache, key, value, 3);
  // Using 'a' again makes 'b' the oldest.
  remember(cache, 'a', 10, 3);
  remember(cache, 'd', 4, 3);
  expect([...cache]).toEqual([
    ['c', 3],
    ['a', 10],
    ['d', 4],
  ]);
});

it('replaces a key in place without dropping another', () => {
  const cache = new Map([
    ['a', 1],
    ['b', 2],
  ]);
  remember(cache, 'b', 20, 2);
  expect([...cache]).toEqual([
    ['a', 1],
    ['b', 20],
  ]);
});

it('charges each entry its key, its value and the overhead, and never holds more than its bound', () => {
  const entryOf = (key: string, value: string) =>
    ENTRY_OVERHEAD_BYTES + stringBytes(key) + value.length;
  const maxBytes = 3 * entryOf('k0', 'x'.repeat(100));
  const cache = new ByteBoundedLru<string>(maxBytes, (value) => value.length);
  for (let i = 0; i < 1000; i += 1) {
    cache.set(`k${i % 10}`, 'x'.repeat(100 + (i % 7)));
    expect(cache.bytes).toBeLessThanOrEqual(maxBytes);
  }
  expect(cache.size).toBeLessThanOrEqual(3);
  // The one just set stays; using one makes it the last to go.
  const lru = new ByteBoundedLru<string>(maxBytes, (value) => value.length);
  for (const key of ['a', 'b', 'c']) lru.set(key, 'x'.repeat(100));
  expect(lru.get('a')).toBeDefined();
  lru.set('d', 'x'.repeat(100));
  expect(['a', 'b', 'c', 'd'].map((key) => lru.get(key) !== undefined)).toEqual([
    true,
    false,
    true,
    true,
  ]);
  // A long key costs what it holds: it pushes more out.
  cache.set('k'.repeat(1000), 'x');
  expect(cache.size).toBe(1);
  expect(cache.bytes).toBe(entryOf('k'.repeat(1000), 'x'));
  // An entry larger than the whole bound is not kept.
  cache.set('huge', 'x'.repeat(maxBytes));
  expect(cache.get('huge')).toBeUndefined();
  expect(cache.bytes).toBeLessThanOrEqual(maxBytes);
});

it('remembers the capped experiments of at most 10,000 routed targets', () => {
  // Only the handle's identity keys the memory: no database is read.
  const db = {} as PostgresDb;
  const targets = (from: number, count: number) =>
    new Map(Array.from({ length: count }, (_, i) => [targetKey(1, from + i), 7] as const));
  rememberCappedExperiments(db, targets(0, 10_000));
  expect(knownCappedExperiments(db, [{ organizationId: 1, targetId: 0 }])).toEqual([7]);
  // Target 0 was just looked up, but only routing refreshes an entry: it is the oldest still.
  rememberCappedExperiments(db, targets(10_000, 1));
  expect(knownCappedExperiments(db, [{ organizationId: 1, targetId: 0 }])).toEqual([]);
  expect(knownCappedExperiments(db, [{ organizationId: 1, targetId: 1 }])).toEqual([7]);
  expect(knownCappedExperiments(db, [{ organizationId: 1, targetId: 10_000 }])).toEqual([7]);
});
