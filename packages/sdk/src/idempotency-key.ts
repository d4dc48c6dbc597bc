// The Idempotency-Key the SDK sends with every POST: a UUIDv7 (RFC 9562, section 5.7), the time
// in milliseconds in its first 48 bits and 74 random bits after the version and variant. Keys made
// later sort later, so the server's index of keys grows at its end instead of at a random place:
// with random keys (UUIDv4) every keyed request changes an index page of its own, which the
// server's commit then writes out (docs/benchmarks.md, Session routing).
//
// Written out here rather than taken from the `uuid` package: its current major version ships ES
// modules only, while this SDK ships CommonJS too, and the layout is these few lines.

/**
 * A new UUIDv7 string, lowercase, `xxxxxxxx-xxxx-7xxx-yxxx-xxxxxxxxxxxx` (y is 8, 9, a or b),
 * stamped with `now` (milliseconds since 1970; the current time unless given).
 */
export function newIdempotencyKey(now: number = Date.now()): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  // 48 bits of milliseconds, big-endian; 2^48 ms lasts until the year 10889.
  let time = now;
  for (let i = 5; i >= 0; i -= 1) {
    bytes[i] = time % 256;
    time = Math.floor(time / 256);
  }
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
