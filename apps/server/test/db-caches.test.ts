// The bound on per-database caches (prepared SQLite statements, cached counts): a full cache drops
// the entry used longest ago, never the one just used.

import { expect, it } from 'vitest';
import { remember } from '../src/db/engine/caches.js';

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
