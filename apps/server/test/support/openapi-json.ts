// Small helpers over parsed JSON documents for the OpenAPI comparison (openapi-diff.ts): local
// `$ref`s followed, values compared and shown independent of key order.

export type JsonObject = { [key: string]: unknown };

export function dereference(document: JsonObject, node: unknown): JsonObject {
  let current = asObject(node);
  const seen = new Set<string>();
  while (typeof current['$ref'] === 'string' && !seen.has(current['$ref'])) {
    seen.add(current['$ref']);
    current = asObject(resolvePointer(document, current['$ref']));
  }
  return current;
}

export function resolvePointer(document: JsonObject, ref: string): unknown {
  if (!ref.startsWith('#/')) throw new Error(`Only local $refs can be compared, not ${ref}`);
  let node: unknown = document;
  for (const segmentText of ref.slice(2).split('/')) {
    const key = segmentText.replace(/~1/g, '/').replace(/~0/g, '~');
    node = isObject(node) ? node[key] : Array.isArray(node) ? node[Number(key)] : undefined;
    if (node === undefined) throw new Error(`$ref ${ref} does not resolve`);
  }
  return node;
}

export function show(value: unknown): string {
  const text = JSON.stringify(value) ?? 'absent';
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

export function union<T>(left: Iterable<T>, right: Iterable<T>): T[] {
  return [...new Set([...left, ...right])];
}

export function deepEqual(left: unknown, right: unknown): boolean {
  return JSON.stringify(sortKeys(left)) === JSON.stringify(sortKeys(right));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (!isObject(value)) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortKeys(value[key])]),
  );
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function asObject(value: unknown): JsonObject {
  return isObject(value) ? value : {};
}

export function asList(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** `Array.isArray`, narrowing to `unknown[]` where it narrows to `any[]`. */
export function isList(value: unknown): value is unknown[] {
  return Array.isArray(value);
}
