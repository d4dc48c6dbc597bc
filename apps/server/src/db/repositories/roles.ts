import { sql } from 'drizzle-orm';
import type { Permission } from '../../vocabulary/permissions.js';
import type { Db } from '../engine/client.js';
import {
  columnsOf,
  insertValues,
  jsonText,
  parsedJson,
  runSteps,
  selectRows,
} from '../engine/portable-sql.js';
import { roles } from '../schema/sqlite.js';

export type Role = typeof roles.$inferSelect;

export interface NewRole {
  organizationId: number;
  name: string;
  permissions: readonly Permission[];
}

const ROLE = columnsOf(roles);

function fromRow(row: Role): Role {
  return { ...row, permissions: parsedJson(row.permissions) };
}

/** Throws a unique violation (see `isUniqueViolation`) when the organization has the name already. */
export async function createRole(db: Db, role: NewRole): Promise<Role> {
  const values = { ...role, permissions: jsonText(role.permissions) };
  const [created] = await runSteps(db, () =>
    selectRows<Role>(sql`INSERT INTO ${roles} ${insertValues(roles, [values])} RETURNING ${ROLE}`),
  );
  return fromRow(created!);
}

export async function findRoleByName(
  db: Db,
  organizationId: number,
  name: string,
): Promise<Role | null> {
  const [found] = await runSteps(db, () =>
    selectRows<Role>(
      sql`SELECT ${ROLE} FROM ${roles}
          WHERE ${roles.organizationId} = ${organizationId} AND ${roles.name} = ${name}`,
    ),
  );
  return found ? fromRow(found) : null;
}
