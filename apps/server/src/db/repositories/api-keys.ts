// The api_keys rows. Keys are made and checked where the key rules (domain/api-keys.ts) are
// applied, use-cases/api-keys.ts and use-cases/authentication.ts: this module is handed a key id
// and the hash of a secret, never a secret.

import { sql } from 'drizzle-orm';
import type { Permission } from '../../vocabulary/permissions.js';
import type { Db } from '../engine/client.js';
import {
  columnsOf,
  execute,
  insertValues,
  parsedJson,
  prepared,
  runSteps,
  runStepsInTransaction,
  runWriteSteps,
  selectRows,
  setValues,
} from '../engine/portable-sql.js';
import { apiKeys, organizations, roles } from '../schema/sqlite.js';

/** An API key row without its secret hash: safe to print or return. */
export type ApiKey = Omit<typeof apiKeys.$inferSelect, 'secretHash'>;

/** Every column but the secret hash, which is read only to check a presented key. */
const API_KEY = columnsOf(apiKeys, ['secretHash']);

export interface NewApiKeyRow {
  organizationId: number;
  roleId: number;
  name: string;
  keyId: string;
  secretHash: string;
}

export async function insertApiKey(db: Db, row: NewApiKeyRow): Promise<ApiKey> {
  const [apiKey] = await runSteps(db, () =>
    selectRows<ApiKey>(
      sql`INSERT INTO ${apiKeys} ${insertValues(apiKeys, [row])} RETURNING ${API_KEY}`,
    ),
  );
  return apiKey!;
}

export async function listApiKeys(
  db: Db,
  organizationId: number,
): Promise<Array<ApiKey & { roleName: string }>> {
  return runSteps(db, () =>
    selectRows<ApiKey & { roleName: string }>(
      sql`SELECT ${API_KEY}, ${roles.name} AS "roleName" FROM ${apiKeys}
          JOIN ${roles} ON ${roles.id} = ${apiKeys.roleId}
          WHERE ${apiKeys.organizationId} = ${organizationId}
          ORDER BY ${apiKeys.id}`,
    ),
  );
}

/** Revokes the key; a key revoked before keeps its first revocation time. Null if unknown. */
export async function revokeApiKey(
  db: Db,
  keyId: string,
): Promise<{ apiKey: ApiKey; alreadyRevoked: boolean } | null> {
  const revokedAt = new Date().toISOString();
  return runStepsInTransaction(db, function* () {
    const revoked = yield* selectRows(
      sql`UPDATE ${apiKeys} SET ${setValues(apiKeys, { revokedAt })}
          WHERE ${apiKeys.keyId} = ${keyId} AND ${apiKeys.revokedAt} IS NULL
          RETURNING ${apiKeys.id}`,
    );
    const [apiKey] = yield* selectRows<ApiKey>(
      sql`SELECT ${API_KEY} FROM ${apiKeys} WHERE ${apiKeys.keyId} = ${keyId}`,
    );
    return apiKey ? { apiKey, alreadyRevoked: revoked.length === 0 } : null;
  });
}

export interface ApiKeyForAuth {
  key: typeof apiKeys.$inferSelect;
  permissions: Permission[];
  organizationId: number;
}

// Every request runs this.
const activeKeyById = prepared<ApiKeyForAuth['key'] & { permissions: Permission[] | string }>(
  sql`SELECT ${columnsOf(apiKeys)}, ${roles.permissions} AS "permissions" FROM ${apiKeys}
      JOIN ${roles} ON ${roles.id} = ${apiKeys.roleId}
      WHERE ${apiKeys.keyId} = ${sql.placeholder('keyId')} AND ${apiKeys.revokedAt} IS NULL`,
);

/** The active (not revoked) key with this key id, with its role's permissions; else null. */
export async function findApiKeyForAuth(db: Db, keyId: string): Promise<ApiKeyForAuth | null> {
  const [row] = await runSteps(db, () => activeKeyById({ keyId }));
  if (!row) return null;
  const { permissions, ...key } = row;
  return { key, permissions: parsedJson(permissions), organizationId: key.organizationId };
}

/** An active key by the names people know it by: its role's and its organization's. */
export interface ApiKeyDescription {
  keyId: string;
  name: string;
  roleName: string;
  permissions: Permission[];
  organizationId: number;
  organizationName: string;
}

/** The active (not revoked) key with this key id, described; else null. */
export async function describeActiveApiKey(
  db: Db,
  keyId: string,
): Promise<ApiKeyDescription | null> {
  const [row] = await runSteps(db, () =>
    selectRows<Omit<ApiKeyDescription, 'permissions'> & { permissions: Permission[] | string }>(
      sql`SELECT ${apiKeys.keyId} AS "keyId", ${apiKeys.name} AS "name",
                 ${roles.name} AS "roleName", ${roles.permissions} AS "permissions",
                 ${organizations.id} AS "organizationId", ${organizations.name} AS "organizationName"
          FROM ${apiKeys}
          JOIN ${roles} ON ${roles.id} = ${apiKeys.roleId}
          JOIN ${organizations} ON ${organizations.id} = ${apiKeys.organizationId}
          WHERE ${apiKeys.keyId} = ${keyId} AND ${apiKeys.revokedAt} IS NULL`,
    ),
  );
  return row ? { ...row, permissions: parsedJson(row.permissions) } : null;
}

/** Key ids read per statement by activeKeyPermissions: well under either database's parameter cap. */
const KEY_IDS_PER_READ = 500;

/**
 * The role permissions of each of `keyIds` that is active now; a key id missing from the answer is
 * revoked or unknown. For what a process holds open on a key (event streams), which it must read
 * again, as authentication is, to honour a revocation or a role change made by any process.
 */
export async function activeKeyPermissions(
  db: Db,
  keyIds: readonly string[],
): Promise<Map<string, Permission[]>> {
  const active = new Map<string, Permission[]>();
  for (let start = 0; start < keyIds.length; start += KEY_IDS_PER_READ) {
    const chunk = keyIds.slice(start, start + KEY_IDS_PER_READ);
    const rows = await runSteps(db, () =>
      selectRows<{ keyId: string; permissions: Permission[] | string }>(
        sql`SELECT ${apiKeys.keyId} AS "keyId", ${roles.permissions} AS "permissions"
            FROM ${apiKeys} JOIN ${roles} ON ${roles.id} = ${apiKeys.roleId}
            WHERE ${apiKeys.keyId} IN (${sql.join(
              chunk.map((keyId) => sql`${keyId}`),
              sql`, `,
            )}) AND ${apiKeys.revokedAt} IS NULL`,
      ),
    );
    for (const row of rows) active.set(row.keyId, parsedJson(row.permissions));
  }
  return active;
}

/** Sets the key's last use to `usedAt`, unless it was used at or after `staleBefore`. */
export async function markApiKeyUsed(
  db: Db,
  apiKeyId: number,
  { usedAt, staleBefore }: { usedAt: string; staleBefore: string },
): Promise<void> {
  await runWriteSteps(db, () =>
    execute(
      sql`UPDATE ${apiKeys} SET ${setValues(apiKeys, { lastUsedAt: usedAt })}
          WHERE ${apiKeys.id} = ${apiKeyId}
            AND (${apiKeys.lastUsedAt} IS NULL OR ${apiKeys.lastUsedAt} < ${staleBefore})`,
    ),
  );
}
