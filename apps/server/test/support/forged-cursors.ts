// Cursors a hostile client makes, for the tests: the construction of the
// unsigned cursors the server gave out before cursors were signed (an unkeyed SHA-256 check anyone can
// compute), and cursors sealed with the database's own secret that hold a position which does not
// fit the list (what a client holding a leaked secret could send).

import { createHash } from 'node:crypto';
import type { SortDirection } from '../../src/vocabulary/list-query.js';
import { AGENT_LIST } from '../../src/domain/agents.js';
import { CHANNEL_TARGET_LIST } from '../../src/domain/channel-targets.js';
import { EVENT_LIST } from '../../src/domain/events.js';
import { EXPERIMENT_LIST } from '../../src/domain/experiments.js';
import type { CursorSigner, ListResource } from '../../src/domain/list-query.js';
import { PROMPT_LIST } from '../../src/domain/prompts.js';
import { WEBHOOK_ENDPOINT_LIST } from '../../src/domain/webhooks.js';

/** Every list operation that takes a cursor, by its path. */
export const CURSOR_LISTS: ReadonlyArray<{
  path: string;
  operationId: string;
  resource: ListResource<string>;
}> = [
  { path: '/api/v1/events/', operationId: 'events_list', resource: EVENT_LIST },
  { path: '/api/v1/prompts/', operationId: 'prompts_list', resource: PROMPT_LIST },
  { path: '/api/v1/experiments/', operationId: 'experiments_list', resource: EXPERIMENT_LIST },
  { path: '/api/v1/agents/', operationId: 'agents_list', resource: AGENT_LIST },
  {
    path: '/api/v1/channels/targets/',
    operationId: 'channel_targets_list',
    resource: CHANNEL_TARGET_LIST,
  },
  {
    path: '/api/v1/webhooks/endpoints',
    operationId: 'webhooks_endpoints_list',
    resource: WEBHOOK_ENDPOINT_LIST,
  },
];

export interface Order {
  property: string;
  direction: SortDirection;
}

/** The query string of an order, as the walk of `walkOf` binds it. */
export function orderQuery(order: Order): string {
  return `order_by=${order.property}&order_by_direction=${order.direction}`;
}

/**
 * The walk a cursor of this list, organization and order (no search, no window) carries, computed
 * as list-query.ts does: it is no secret, only a digest of the query.
 */
export function walkOf(
  resource: ListResource<string>,
  organizationId: number,
  order: Order = resource.defaultOrder,
): string {
  const ordered = { property: order.property, direction: order.direction };
  return createHash('sha256')
    .update(JSON.stringify([resource.name, organizationId, [], {}, ordered]))
    .digest('base64url')
    .slice(0, 16);
}

function payloadOf(walk: string, value: unknown, id: unknown): string {
  return Buffer.from(JSON.stringify([walk, value, id])).toString('base64url');
}

/** A cursor made as the server made them before they were signed: `<payload>.<unkeyed SHA-256>`. */
export function unkeyedCursor(walk: string, value: unknown, id: unknown): string {
  const payload = payloadOf(walk, value, id);
  const check = createHash('sha256')
    .update(`agentline list cursor\n${payload}`)
    .digest('base64url')
    .slice(0, 16);
  return `${payload}.${check}`;
}

/** A cursor sealed by the server's own signer around any payload. */
export function sealedCursor(signer: CursorSigner, walk: string, value: unknown, id: unknown) {
  const payload = payloadOf(walk, value, id);
  return `${payload}.${signer.seal(payload)}`;
}

/** A cursor sealed by the signer whose payload is any JSON, not the [walk, value, id] triple. */
export function sealedPayload(signer: CursorSigner, parts: unknown): string {
  const payload = Buffer.from(JSON.stringify(parts)).toString('base64url');
  return `${payload}.${signer.seal(payload)}`;
}

/**
 * Positions [what, value, id] that cannot be the list's when it is ordered by `property`: values
 * of another type, integers out of the column's range, null where the property is never null, and
 * ids a table cannot hold. The ids are valid except where the id is the point.
 */
export function misfitPositions(
  resource: ListResource<string>,
  property: string,
): Array<[string, unknown, unknown]> {
  const kind = resource.kinds[property]!;
  const fine = { integer: 1, boolean: true, datetime: '2026-03-01T10:00:00.000Z' }[
    kind as 'integer' | 'boolean' | 'datetime'
  ];
  const value = fine ?? 'a';
  const wrongValues: Array<[string, unknown]> = [
    ['an object', { a: 1 }],
    ['an array', [1]],
  ];
  if (kind === 'integer') {
    wrongValues.push(
      ['3e9', 3e9],
      ['2^31', 2 ** 31],
      ['2^53 - 1', Number.MAX_SAFE_INTEGER],
      ['-2^31 - 1', -(2 ** 31) - 1],
      ['1.5', 1.5],
      ['a string', '12'],
      ['a boolean', true],
    );
  } else if (kind === 'boolean') {
    wrongValues.push(['a string', 'true'], ['1', 1], ['0', 0]);
  } else if (kind === 'datetime') {
    wrongValues.push(
      ['a number', 1_700_000_000_000],
      ['a boolean', false],
      ['not a date', 'yesterday'],
      ['a date-time without milliseconds', '2026-03-01T10:00:00Z'],
      ['an offset', '2026-03-01T10:00:00.000+01:00'],
      ['month 13', '2026-13-01T10:00:00.000Z'],
    );
  } else {
    wrongValues.push(['a number', 12], ['a boolean', true], ['3e9', 3e9]);
  }
  if (!resource.nullable.includes(property)) wrongValues.push(['null', null]);
  const positions: Array<[string, unknown, unknown]> = wrongValues.map(([what, v]) => [
    `${property} as ${what}`,
    v,
    1,
  ]);
  const wrongIds: Array<[string, unknown]> = [
    ['id 2^53', 2 ** 53],
    ['id 1.5', 1.5],
    ['id as a string', '7'],
    ['id null', null],
    ['id as a boolean', true],
  ];
  if (resource.ids === 'integer') wrongIds.push(['id 3e9', 3e9], ['id 2^53 - 1', 2 ** 53 - 1]);
  for (const [what, id] of wrongIds) positions.push([what, value, id]);
  return positions;
}
