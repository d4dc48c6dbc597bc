// One text for equal JSON values: an imported event's content key and an Idempotency-Key's
// request fingerprint compare values, not how a client happened to serialise them.

/**
 * JSON text with object keys sorted and no whitespace, so equal content gives equal text whatever
 * the key order or spacing it was sent with; array order and every value still count.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const keys = Object.keys(value).sort();
  const members = keys.map(
    (key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`,
  );
  return `{${members.join(',')}}`;
}
