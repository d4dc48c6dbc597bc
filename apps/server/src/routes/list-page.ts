// The read behind every plain list operation, which the route areas share: parse the list query,
// read one page of records, turn each into its wire shape narrowed to `fields`, and page it.

import type { Context } from 'hono';
import type { Db } from '../db/engine/client.js';
import {
  listPage,
  parseListQuery,
  projectItem,
  type ListPage,
  type ListParameters,
  type ListResource,
} from '../domain/list-query.js';
import type { AppEnv } from '../http/app-env.js';
import { cursorSigner } from '../runtime/cursor-signer.js';
import type { ListedPage, ListQuery } from '../vocabulary/list-query.js';

/** One page of a list's records, as its repository reads it. */
export type ReadPage<P extends string, R> = (
  db: Db,
  organizationId: number,
  query: ListQuery<P>,
) => Promise<ListedPage<R>>;

/** The page of `resource` that `params` ask for: each record `read` gives, as `toItem` maps it. */
export async function readPage<P extends string, R, I>(
  c: Context<AppEnv>,
  params: ListParameters<P>,
  resource: ListResource<P>,
  read: ReadPage<P, R>,
  toItem: (record: R, query: ListQuery<P>) => I,
): Promise<ListPage<I>> {
  const db = c.get('db');
  const { organizationId } = c.get('auth');
  const signer = await cursorSigner(db);
  const query = await parseListQuery(resource, params, organizationId, signer);
  const { records, totalCount, next } = await read(db, organizationId, query);
  const items = records.map((record) => toItem(record, query));
  return listPage(items, query, totalCount, next, signer);
}

/** The same for a list whose items `fields` narrows: each `toWire` of a record, projected. */
export function readListPage<P extends string, R, W extends { id: unknown }>(
  c: Context<AppEnv>,
  params: ListParameters<P>,
  resource: ListResource<P>,
  read: ReadPage<P, R>,
  toWire: (record: R) => W,
): Promise<ListPage<Pick<W, 'id'> & Partial<W>>> {
  return readPage(c, params, resource, read, (record, query) =>
    projectItem<W, 'id'>(toWire(record), query.projection),
  );
}
