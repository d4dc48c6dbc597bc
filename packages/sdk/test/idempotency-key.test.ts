// The SDK's default Idempotency-Key: a UUIDv7 whose order follows the time it was made.

import { describe, expect, it } from 'vitest';
import { newIdempotencyKey } from '../src/index.js';
import { UUID_V7 } from './uuid-v7.js';

describe('newIdempotencyKey', () => {
  it('is a UUIDv7 whose first 48 bits are the milliseconds it was made at', () => {
    const now = Date.UTC(2026, 10, 26, 10, 30, 0, 123);
    const key = newIdempotencyKey(now);
    expect(key).toMatch(UUID_V7);
    expect(parseInt(key.replace(/-/g, '').slice(0, 12), 16)).toBe(now);
    expect(newIdempotencyKey()).toMatch(UUID_V7);
  });

  it('sorts keys made in later milliseconds after earlier ones, as strings', () => {
    const start = Date.UTC(2026, 10, 26);
    // Across byte boundaries of the time field, where a wrong byte order would show.
    const times = [0, 1, 255, 256, 65_535, 65_536, 2 ** 32, 2 ** 40 + 1].map((t) => start + t);
    const keys = times.map((t) => newIdempotencyKey(t));
    expect([...keys].sort()).toEqual(keys);
  });

  it('gives different keys within the same millisecond', () => {
    const now = Date.now();
    const keys = new Set(Array.from({ length: 10_000 }, () => newIdempotencyKey(now)));
    expect(keys.size).toBe(10_000);
  });
});
