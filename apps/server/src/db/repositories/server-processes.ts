// The server processes on this database (schema: serverProcesses): each one's heartbeat also
// counts the others it has seen lately and forgets those long gone.

import { sql } from 'drizzle-orm';
import type { Db } from '../engine/client.js';
import { execute, runWriteSteps, selectRows } from '../engine/portable-sql.js';
import { serverProcesses } from '../schema/sqlite.js';

const { id, seenAt } = serverProcesses;

/** Milliseconds since the epoch, as a bigint parameter on both databases. */
const at = (ms: number) => sql`CAST(${ms} AS bigint)`;

/**
 * Notes that process `processId` is alive at `now`, removes the rows not seen since `forgetBefore`,
 * and says how many processes were seen since `liveAfter`, this one included.
 */
export async function heartbeat(
  db: Db,
  processId: string,
  { now, liveAfter, forgetBefore }: { now: number; liveAfter: number; forgetBefore: number },
): Promise<number> {
  return runWriteSteps(db, function* () {
    yield* execute(sql`INSERT INTO ${serverProcesses}
      (${sql.identifier(id.name)}, ${sql.identifier(seenAt.name)}) VALUES (${processId}, ${at(now)})
      ON CONFLICT (${sql.identifier(id.name)}) DO UPDATE SET ${sql.identifier(seenAt.name)} = ${at(now)}`);
    yield* execute(sql`DELETE FROM ${serverProcesses} WHERE ${seenAt} < ${at(forgetBefore)}`);
    const [live] = yield* selectRows<{ n: number }>(sql`SELECT count(*) AS n
      FROM ${serverProcesses} WHERE ${seenAt} >= ${at(liveAfter)}`);
    return Math.max(1, Number(live!.n));
  });
}

/** Removes the process's row (it is stopping): the others count one fewer at their next beat. */
export async function leave(db: Db, processId: string): Promise<void> {
  await runWriteSteps(db, function* () {
    yield* execute(sql`DELETE FROM ${serverProcesses} WHERE ${id} = ${processId}`);
  });
}
