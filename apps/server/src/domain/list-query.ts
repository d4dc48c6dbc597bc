// The list semantics shared by the events, prompts and experiments lists (docs/decisions.md
// section 2): search pairs, ordering with a stable tie-breaker, projection, time window, paging.
// The generated route schemas already checked types, bounds and property names; this module
// checks what depends on several parameters at once or on the kind of a property.

import { hash } from 'node:crypto';
import { InputRuleError, type InputProblem } from './errors.js';
import type { JsonText } from '../vocabulary/json-text.js';
import type {
  ListPosition,
  ListQuery,
  PropertyKind,
  SearchFilter,
  SearchValue,
  SortDirection,
} from '../vocabulary/list-query.js';
import { normalizeDateTime } from './timestamps.js';

export interface ListResource<P extends string> {
  /** The list's name, so a cursor of one list is refused by another. */
  name: string;
  /** Every property of the list and how it is searched. */
  kinds: Record<P, PropertyKind>;
  /** The item keys a property stands for in `fields` (a property stands for itself by default). */
  projects?: Partial<Record<P, readonly string[]>>;
  /** Item keys that `fields` never removes (the schema's required properties). */
  alwaysIncluded: readonly string[];
  defaultOrder: { property: P; direction: SortDirection };
  /**
   * The properties that may be null, so a cursor may carry null for them. Each list writes it as
   * `everyValueOf<NullableKeys<Item> & P>()([...])`, which compiles only if it names exactly the
   * properties that the spec's item schema marks nullable (a property that is not an item key,
   * such as name_exact, is ordered by a column that is never null).
   */
  nullable: readonly P[];
  /**
   * How large the list's ids (its tie-breaker) may be: PostgreSQL `integer` ids (32-bit), or
   * `bigint` ones (events), which the server reads as numbers up to 2^53 - 1.
   */
  ids: 'integer' | 'bigint';
}

/**
 * The keying of a list of records with integer ids: the id in every item, and the order by id when
 * none is asked for (ascending unless told otherwise).
 */
export function keyedById(direction: SortDirection = 'asc') {
  return {
    alwaysIncluded: ['id'],
    defaultOrder: { property: 'id', direction },
    ids: 'integer',
  } as const;
}

/** The keys of an item type whose value may be null. */
export type NullableKeys<Item> = {
  [K in keyof Item]-?: null extends Item[K] ? K : never;
}[keyof Item] &
  string;

/** The list parameters as the generated route schema hands them over. */
export interface ListParameters<P extends string> {
  page: number;
  limit: number;
  search_fields: P[];
  search_field_values: string[];
  order_by?: P | undefined;
  order_by_direction?: SortDirection | undefined;
  fields: P[];
  start_datetime?: string | undefined;
  end_datetime?: string | undefined;
  cursor?: string | undefined;
}

/** The parameters of a list that only pages: it has nothing to search or to narrow to `fields`. */
export function pagingOnly<P extends string = never>(
  params: Omit<ListParameters<P>, 'search_fields' | 'search_field_values' | 'fields'>,
): ListParameters<P> {
  return { ...params, search_fields: [], search_field_values: [], fields: [] };
}

function searchValueOf(kind: PropertyKind, raw: string): SearchValue | InputProblem {
  switch (kind) {
    case 'integer':
      if (!/^-?\d+$/.test(raw) || !Number.isSafeInteger(Number(raw))) {
        return {
          loc: [],
          msg: `"${raw}" is not a whole number; this field is searched by integer equality.`,
          type: 'int_parsing',
        };
      }
      return Number(raw);
    case 'boolean':
      if (raw !== 'true' && raw !== 'false') {
        return {
          loc: [],
          msg: `"${raw}" is not a boolean; use true or false.`,
          type: 'bool_parsing',
        };
      }
      return raw === 'true';
    default:
      return raw;
  }
}

function windowBound(name: 'start_datetime' | 'end_datetime', raw: string | undefined) {
  if (raw === undefined) return { value: undefined };
  const value = normalizeDateTime(raw);
  if (value === null) {
    return {
      problem: {
        loc: ['query', name],
        msg: `"${raw}" is not an ISO 8601 date-time with a time zone; use for example 2026-05-01T00:00:00Z.`,
        type: 'datetime_parsing',
      } satisfies InputProblem,
    };
  }
  return { value };
}

// A cursor is `<payload>.<seal>`: the payload is base64url JSON [walk, value, id] ([walk, start,
// id, true] when the value is a long text, of which it carries the start), the seal what a
// CursorSigner made of it (the server's: the id of a secret and an HMAC-SHA256 under it). Cursors
// carry nothing a client could not see (the last item's value and id); the seal makes a cursor
// that the server did not give out a clear 422 instead of a page at a position a client chose,
// and the walk binds it to one organization, list and query. Its position is checked against the
// ordered property's kind as well before it reaches SQL, so a cursor that is sealed but does not
// fit (a seal made with a leaked or guessed secret, a list changed since) is a 422 too.

/** What a CursorSigner makes of a seal. */
export type SealCheck =
  | 'valid'
  // Not a seal the signer made, or not of this payload.
  | 'forged'
  // Made with a secret that was rotated out since.
  | 'retired';

/**
 * Seals cursors and checks their seals. The server's keeps its secrets in the database
 * (runtime/cursor-signer.ts); checking may read them again, so it may answer later.
 */
export interface CursorSigner {
  /** Names the secret that seals now: a kept page is reused only while it is the same. */
  readonly sealingSecretId: number;
  /** The seal of `payload`, which the cursor carries after a `.` (it may hold dots itself). */
  seal(payload: string): string;
  verify(payload: string, seal: string): SealCheck | Promise<SealCheck>;
}

function walkOf(
  resource: ListResource<string>,
  organizationId: number,
  parts: Pick<ListQuery<string>, 'filters' | 'window' | 'order'>,
): string {
  // One-shot: a Hash object per list request showed in its profile (docs/benchmarks.md).
  const walk = JSON.stringify([
    resource.name,
    organizationId,
    parts.filters,
    parts.window,
    parts.order,
  ]);
  return hash('sha256', walk, 'base64url').slice(0, 16);
}

/**
 * A position's value as a cursor carries it: SQLite reads booleans as 0 and 1, PostgreSQL as
 * booleans; the cursor holds true or false from either.
 */
function cursorValue(kind: PropertyKind, value: ListPosition['value']): ListPosition['value'] {
  return kind === 'boolean' && typeof value === 'number' ? value !== 0 : value;
}

/**
 * The most of a text a cursor carries, in code points (each up to 6 bytes of JSON): within the
 * 4,096 characters the spec allows a cursor, and more than PostgreSQL's order indexes hold of a
 * text (db/schema/order-prefix.ts), which the page after it seeks by.
 */
export const CURSOR_TEXT_CODE_POINTS = 256;

/** The first CURSOR_TEXT_CODE_POINTS code points of `text`, or null if it has no more. */
function cutText(text: string): string | null {
  let end = 0;
  for (let points = 0; points < CURSOR_TEXT_CODE_POINTS; points += 1) {
    if (end >= text.length) return null;
    end += text.codePointAt(end)! > 0xffff ? 2 : 1;
  }
  return end < text.length ? text.slice(0, end) : null;
}

/** The cursor that continues `query` after `position`. */
export function encodeCursor(
  query: ListQuery<string>,
  position: ListPosition,
  signer: CursorSigner,
): string {
  const value = cursorValue(query.orderKind, position.value);
  const cut = typeof value === 'string' ? cutText(value) : null;
  const parts =
    cut === null ? [query.walk, value, position.id] : [query.walk, cut, position.id, true];
  const payload = Buffer.from(JSON.stringify(parts)).toString('base64url');
  return `${payload}.${signer.seal(payload)}`;
}

const START_AGAIN =
  'pass next_cursor exactly as received, or leave cursor out to start again from the first page.';

function cursorProblem(msg: string): InputProblem {
  return { loc: ['query', 'cursor'], msg, type: 'value_error' };
}

const INTEGER_RANGE = { min: -(2 ** 31), max: 2 ** 31 - 1 };
const BIGINT_RANGE = { min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER };

function isIntegerIn(value: unknown, range: { min: number; max: number }): value is number {
  return (
    Number.isSafeInteger(value) && (value as number) >= range.min && (value as number) <= range.max
  );
}

/**
 * Whether a cursor's value can be the ordered property's: what its kind reads (every integer
 * property is an `integer` column on PostgreSQL, or a count), null only where it may be null.
 */
function fitsProperty(kind: PropertyKind, nullable: boolean, value: unknown): boolean {
  if (value === null) return nullable;
  switch (kind) {
    case 'integer':
      return isIntegerIn(value, INTEGER_RANGE);
    case 'boolean':
      return typeof value === 'boolean';
    case 'datetime':
      return typeof value === 'string' && normalizeDateTime(value) === value;
    case 'text':
    case 'exact':
    case 'text_either':
    case 'json':
      return typeof value === 'string';
  }
}

const KIND_NAMES: Record<PropertyKind, string> = {
  integer: 'a 32-bit integer',
  boolean: 'true or false',
  datetime: 'a date-time as the API writes them',
  text: 'a string',
  exact: 'a string',
  text_either: 'a string',
  json: 'JSON text',
};

async function decodeCursor(
  resource: ListResource<string>,
  order: ListQuery<string>['order'],
  cursor: string,
  walk: string,
  signer: CursorSigner,
): Promise<ListPosition | InputProblem> {
  const dot = cursor.indexOf('.');
  const payload = dot > 0 ? cursor.slice(0, dot) : '';
  const sealCheck = payload ? await signer.verify(payload, cursor.slice(dot + 1)) : 'forged';
  if (sealCheck === 'retired') {
    return cursorProblem(
      `was signed with a cursor secret that has been rotated out since (a cursor outlives one rotation); leave cursor out to start again from the first page.`,
    );
  }
  if (sealCheck !== 'valid') {
    return cursorProblem(
      `is not a cursor this API gave out (it was altered, cut short or made up); ${START_AGAIN}`,
    );
  }
  let parts: unknown;
  try {
    parts = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    parts = null;
  }
  const cut = Array.isArray(parts) && parts.length === 4 && parts[3] === true;
  if (!Array.isArray(parts) || !(parts.length === 3 || cut)) {
    return cursorProblem(`is not a cursor this API gave out; ${START_AGAIN}`);
  }
  const [cursorWalk, value, id] = parts as unknown[];
  if (cursorWalk !== walk) {
    return cursorProblem(
      'belongs to another query: send it with the search_fields, search_field_values, order_by, order_by_direction, start_datetime and end_datetime of the page that gave it out (and the same API key organization), or leave cursor out to start again.',
    );
  }
  const kind = resource.kinds[order.property]!;
  const nullable = resource.nullable.includes(order.property);
  const idRange = resource.ids === 'bigint' ? BIGINT_RANGE : INTEGER_RANGE;
  // A cut value is a text's start, of the length encodeCursor cuts to.
  const fits =
    fitsProperty(kind, nullable && !cut, value) &&
    (!cut || (typeof value === 'string' && [...value].length === CURSOR_TEXT_CODE_POINTS));
  if (!fits || !isIntegerIn(id, idRange)) {
    return cursorProblem(
      `does not mark a place in this list: ordered by ${order.property}, a cursor holds ${KIND_NAMES[kind]}${nullable ? ' or null' : ''} and an id; ${START_AGAIN}`,
    );
  }
  const position = { value: value as ListPosition['value'], id };
  return cut ? { ...position, cut } : position;
}

/**
 * Checks the list parameters against the resource and returns the query to run for the
 * organization (a cursor is valid only for the organization and query that it came from).
 */
export async function parseListQuery<P extends string>(
  resource: ListResource<P>,
  params: ListParameters<P>,
  organizationId: number,
  signer: CursorSigner,
): Promise<ListQuery<P>> {
  const problems: InputProblem[] = [];
  const filters: SearchFilter<P>[] = [];

  if (params.search_fields.length !== params.search_field_values.length) {
    problems.push({
      loc: ['query', 'search_field_values'],
      msg: `search_fields has ${params.search_fields.length} entries but search_field_values has ${params.search_field_values.length}; give one value per field, in the same order.`,
      type: 'value_error',
    });
  } else {
    params.search_fields.forEach((property, index) => {
      const kind = resource.kinds[property];
      const parsed = searchValueOf(kind, params.search_field_values[index] ?? '');
      if (typeof parsed === 'object') {
        problems.push({
          ...parsed,
          loc: ['query', 'search_field_values', index],
          msg: `${property}: ${parsed.msg}`,
        });
      } else {
        filters.push({ property, kind, value: parsed });
      }
    });
  }

  const start = windowBound('start_datetime', params.start_datetime);
  const end = windowBound('end_datetime', params.end_datetime);
  for (const bound of [start, end]) if (bound.problem) problems.push(bound.problem);
  if (start.value && end.value && start.value > end.value) {
    problems.push({
      loc: ['query', 'start_datetime'],
      msg: `start_datetime (${start.value}) is after end_datetime (${end.value}); swap them or widen the window.`,
      type: 'value_error',
    });
  }

  const order = params.order_by
    ? { property: params.order_by, direction: params.order_by_direction ?? 'asc' }
    : {
        property: resource.defaultOrder.property,
        direction: params.order_by_direction ?? resource.defaultOrder.direction,
      };

  let projection: Set<string> | null = null;
  if (params.fields.length > 0) {
    projection = new Set(resource.alwaysIncluded);
    for (const property of params.fields) {
      for (const key of resource.projects?.[property] ?? [property]) projection.add(key);
    }
  }

  const window: ListQuery<P>['window'] = {};
  if (start.value) window.start = start.value;
  if (end.value) window.end = end.value;

  const walk = walkOf(resource, organizationId, { filters, window, order });
  let after: ListPosition | null = null;
  if (params.cursor !== undefined) {
    const decoded = await decodeCursor(resource, order, params.cursor, walk, signer);
    if ('loc' in decoded) problems.push(decoded);
    else after = decoded;
  }

  if (problems.length > 0) throw new InputRuleError(problems);

  return {
    page: params.page,
    limit: params.limit,
    offset: after ? 0 : params.page * params.limit,
    filters,
    order,
    orderKind: resource.kinds[order.property],
    projection,
    window,
    after,
    walk,
  };
}

/**
 * Keeps only the projected keys of an item (all of them when there is no projection). `Kept`
 * names the keys the resource always includes, which the projection never removes.
 */
export function projectItem<T extends object, Kept extends keyof T = never>(
  item: T,
  projection: ReadonlySet<string> | null,
): Pick<T, Kept> & Partial<T> {
  if (!projection) return item;
  return Object.fromEntries(Object.entries(item).filter(([key]) => projection.has(key))) as Pick<
    T,
    Kept
  > &
    Partial<T>;
}

export interface ListPage<T> {
  items: T[];
  page: number;
  page_size: number;
  total_pages: number | null;
  total_count: number;
  next_cursor: string | null;
}

/** `next`: where the following page starts, or null when this page is the last. */
export function listPage<T>(
  items: T[],
  query: ListQuery<string>,
  totalCount: number,
  next: ListPosition | null,
  signer: CursorSigner,
): ListPage<T> {
  return {
    items,
    page: query.page,
    page_size: query.limit,
    total_pages: query.limit === 0 ? null : Math.ceil(totalCount / query.limit),
    total_count: totalCount,
    next_cursor: next ? encodeCursor(query, next, signer) : null,
  };
}

/** listPage serialised, around items that are JSON text already (rendered by the database). */
export function listPageJson<T>(
  itemsJson: ReadonlyArray<JsonText<T>>,
  query: ListQuery<string>,
  totalCount: number,
  next: ListPosition | null,
  signer: CursorSigner,
): JsonText<ListPage<T>> {
  // `items` is the first key; a replacement function, as a string would expand `$&` in the items.
  return JSON.stringify(listPage([], query, totalCount, next, signer)).replace(
    '"items":[]',
    () => `"items":[${itemsJson.join(',')}]`,
  ) as JsonText<ListPage<T>>;
}
