// Many distinct query strings of the events list, as a client growing the kept answers would send
// them, and a load loop that sends them: for the tests of that bound (kept-answers-bounds.test.ts).

/** The parameters the reorderings shuffle: one query, spelled in 24 orders. */
const ORDERED = ['limit=0', 'page=0', 'order_by_direction=asc', 'fields=description'];

function permutation<T>(items: readonly T[], index: number): T[] {
  const rest = [...items];
  const result: T[] = [];
  for (let n = index; rest.length > 0; n = Math.floor(n / (rest.length + 1))) {
    result.push(...rest.splice(n % rest.length, 1));
  }
  return result;
}

export type QueryKind = 'unknown parameter' | 'reordered' | 'distinct';

/** The longest search value the spec allows. */
const SEARCH_VALUE_MAX_LENGTH = 1024;

/**
 * The `index`-th query string, its kind in turn: the same query with an unknown parameter of its
 * own (`padding` characters long), the same query in another order of its parameters (and an
 * unknown one), or a query of its own (a search that no event matches, for a value of `padding`
 * characters up to the longest allowed, and the rest of `padding` in an unknown parameter).
 */
export function distinctEventsQuery(
  index: number,
  padding: number,
): { kind: QueryKind; query: string } {
  const pad = String(index).padStart(padding, 'q');
  switch (index % 3) {
    case 0:
      return { kind: 'unknown parameter', query: `?limit=0&x${index}=${pad}` };
    case 1:
      return {
        kind: 'reordered',
        query: `?${permutation(ORDERED, index).join('&')}&unknown=${pad}`,
      };
    default:
      return {
        kind: 'distinct',
        query: `?limit=0&search_fields=description&search_field_values=${pad.slice(-SEARCH_VALUE_MAX_LENGTH)}&rest=${pad.slice(SEARCH_VALUE_MAX_LENGTH)}`,
      };
  }
}

/**
 * Sends GET `baseUrl + path(i)` for i below `count`, `connections` at a time, and calls `each`
 * after every answer (which must be a 200).
 */
export async function sendAll(
  baseUrl: string,
  key: string,
  count: number,
  path: (index: number) => string,
  { connections = 8, each }: { connections?: number; each?: (index: number) => void } = {},
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const index = next;
      next += 1;
      const response = await fetch(`${baseUrl}${path(index)}`, {
        headers: { 'Service-API-Key': key },
      });
      await response.arrayBuffer();
      if (response.status !== 200) {
        throw new Error(`${path(index).slice(0, 100)}... answered ${response.status}`);
      }
      each?.(index);
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
}
