import { sql, type SQL } from 'drizzle-orm';
import type { Db } from '../engine/client.js';
import {
  columnsOf,
  execute,
  idEquals,
  insertValues,
  prepared,
  runReadSteps,
  runSteps,
  selectRows,
  setValues,
  type Steps,
} from '../engine/portable-sql.js';
import { organizations } from '../schema/sqlite.js';

export type Organization = typeof organizations.$inferSelect;

const ORGANIZATION = columnsOf(organizations);

/** Throws a unique violation (see `isUniqueViolation`) when the name is taken. */
export async function createOrganization(db: Db, name: string): Promise<Organization> {
  const [created] = await runSteps(db, () =>
    selectRows<Organization>(
      sql`INSERT INTO ${organizations} ${insertValues(organizations, [{ name }])}
          RETURNING ${ORGANIZATION}`,
    ),
  );
  return created!;
}

function* organizationWhere(condition: SQL): Steps<Organization | null> {
  const [found] = yield* selectRows<Organization>(
    sql`SELECT ${ORGANIZATION} FROM ${organizations} WHERE ${condition}`,
  );
  return found ?? null;
}

/** `reference` is an id (digits) or a name; an id wins when an organization is named like one. */
export async function findOrganization(db: Db, reference: string): Promise<Organization | null> {
  return runSteps(db, function* () {
    // As bigint: a long run of digits is then a name to look up, not an error on PostgreSQL.
    const byId = /^\d+$/.test(reference)
      ? yield* organizationWhere(idEquals(organizations.id, Number(reference)))
      : null;
    return byId ?? (yield* organizationWhere(sql`${organizations.name} = ${reference}`));
  });
}

export async function listOrganizations(db: Db): Promise<Organization[]> {
  return runSteps(db, () =>
    selectRows<Organization>(
      sql`SELECT ${ORGANIZATION} FROM ${organizations} ORDER BY ${organizations.id}`,
    ),
  );
}

const recordsVersionById = prepared<{ version: number }>(
  sql`SELECT ${organizations.recordsVersion} AS "version" FROM ${organizations}
      WHERE ${organizations.id} = ${sql.placeholder('organizationId')}`,
);

/** How many times the organization's platform records were loaded: a cache key for answers. */
export async function recordsVersion(db: Db, organizationId: number): Promise<number> {
  const [row] = await runReadSteps(db, () => recordsVersionById({ organizationId }));
  return row?.version ?? 0;
}

/** Counts one more load of the organization's platform records, inside the load's transaction. */
export function bumpRecordsVersion(organizationId: number): Steps<void> {
  return execute(
    sql`UPDATE ${organizations} SET ${setValues(organizations, {
      recordsVersion: sql`${organizations.recordsVersion} + 1`,
    })} WHERE ${organizations.id} = ${organizationId}`,
  );
}
