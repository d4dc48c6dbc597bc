// An organization's version of a list's data, read once for the requests of the organization that
// arrive in one turn of the event loop (gather-batches.ts): the read runs on the next turn, after
// all of them arrived, and one arriving while it is in flight waits for the next read. The kept
// list answers (http/versioned-cache.ts) check every request against such a read.

import type { Db } from '../db/engine/client.js';
import { gatherBatches } from '../db/engine/gather-batches.js';

/**
 * A version of some data: a value that changes with every change of it and never returns to an
 * earlier one (a counter, a highest id, a pair of them as text).
 */
export type Version = number | string;

/** Reads an organization's version of some data. */
export type VersionOf = (db: Db, organizationId: number) => Promise<Version>;

/** `versionOf`, read once per organization for the requests gathered in a turn. */
export function versionReadPerTurn(versionOf: VersionOf): VersionOf {
  return gatherBatches(
    async (db: Db, organizationIds: number[]) => {
      const version = await versionOf(db, organizationIds[0]!);
      return organizationIds.map(() => ({ ok: true as const, value: version }));
    },
    { laneOf: (organizationId) => organizationId },
  );
}
