// A list's query as its route parses it, for tests that call a list's read in process.

import type { Db } from '../../src/db/engine/client.js';
import {
  parseListQuery,
  type ListParameters,
  type ListResource,
} from '../../src/domain/list-query.js';
import { cursorSigner } from '../../src/runtime/cursor-signer.js';
import type { ListQuery } from '../../src/vocabulary/list-query.js';

/** `params` over page 0 of 25, with no search, order or fields, parsed for the organization. */
export async function listQueryOf<P extends string>(
  db: Db,
  resource: ListResource<P>,
  organizationId: number,
  params: Partial<ListParameters<P>> = {},
): Promise<ListQuery<P>> {
  return parseListQuery(
    resource,
    { page: 0, limit: 25, search_fields: [], search_field_values: [], fields: [], ...params },
    organizationId,
    await cursorSigner(db),
  );
}
