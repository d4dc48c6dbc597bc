import { and, asc, eq, getTableColumns, isNull, lt, or, sql } from 'drizzle-orm';
import {
  apiKeySecretMatches,
  formatApiKey,
  generateApiKey,
  hashApiKeySecret,
  parseApiKey,
} from '../../domain/api-keys.js';
import type { Permission } from '../../domain/permissions.js';
import type { Db, PostgresDb, SqliteDb } from '../client.js';
import { perDatabase } from '../prepared.js';
import { createRole } from './roles.js';
import { apiKeys, roles } from '../schema.js';
import { apiKeys as pgApiKeys, roles as pgRoles } from '../schema-postgres.js';

/** An API key row without its secret hash: safe to print or return. */
export type ApiKey = Omit<typeof apiKeys.$inferSelect, 'secretHash'>;

/** Every column but the secret hash, which is read only to check a presented key. */
function withoutSecretHash<C extends { secretHash: unknown }>({ secretHash, ...columns }: C) {
  return columns;
}

const apiKeyColumns = withoutSecretHash(getTableColumns(apiKeys));
const pgApiKeyColumns = withoutSecretHash(getTableColumns(pgApiKeys));

export interface NewApiKey {
  organizationId: number;
  roleId: number;
  name: string;
}

/** Stores a new key and returns it with the full key text, which exists nowhere else afterwards. */
export async function createApiKey(
  db: Db,
  newKey: NewApiKey,
): Promise<{ apiKey: ApiKey; fullKey: string }> {
  const parts = generateApiKey();
  const values = { ...newKey, keyId: parts.keyId, secretHash: hashApiKeySecret(parts.secret) };
  const [apiKey] =
    db.kind === 'sqlite'
      ? db.orm.insert(apiKeys).values(values).returning(apiKeyColumns).all()
      : await db.orm.insert(pgApiKeys).values(values).returning(pgApiKeyColumns);
  return { apiKey: apiKey!, fullKey: formatApiKey(parts) };
}

/**
 * A key in a new role of its own that holds exactly `permissions`: the demo's admin key, and the
 * keys tests and benchmarks make. Returns the full key text.
 */
export async function createKeyWithOwnRole(
  db: Db,
  key: {
    organizationId: number;
    roleName: string;
    keyName: string;
    permissions: readonly Permission[];
  },
): Promise<string> {
  const role = await createRole(db, {
    organizationId: key.organizationId,
    name: key.roleName,
    permissions: [...key.permissions],
  });
  const { fullKey } = await createApiKey(db, {
    organizationId: key.organizationId,
    roleId: role.id,
    name: key.keyName,
  });
  return fullKey;
}

export async function listApiKeys(
  db: Db,
  organizationId: number,
): Promise<Array<ApiKey & { roleName: string }>> {
  if (db.kind === 'sqlite') {
    return db.orm
      .select({ ...apiKeyColumns, roleName: roles.name })
      .from(apiKeys)
      .innerJoin(roles, eq(roles.id, apiKeys.roleId))
      .where(eq(apiKeys.organizationId, organizationId))
      .orderBy(asc(apiKeys.id))
      .all();
  }
  return db.orm
    .select({ ...pgApiKeyColumns, roleName: pgRoles.name })
    .from(pgApiKeys)
    .innerJoin(pgRoles, eq(pgRoles.id, pgApiKeys.roleId))
    .where(eq(pgApiKeys.organizationId, organizationId))
    .orderBy(asc(pgApiKeys.id));
}

/** Revokes the key; a key revoked before keeps its first revocation time. Null if unknown. */
export async function revokeApiKey(
  db: Db,
  keyId: string,
): Promise<{ apiKey: ApiKey; alreadyRevoked: boolean } | null> {
  const revokedAt = new Date().toISOString();
  if (db.kind === 'sqlite') {
    const { changes } = db.orm
      .update(apiKeys)
      .set({ revokedAt })
      .where(and(eq(apiKeys.keyId, keyId), isNull(apiKeys.revokedAt)))
      .run();
    const apiKey = db.orm.select(apiKeyColumns).from(apiKeys).where(eq(apiKeys.keyId, keyId)).get();
    return apiKey ? { apiKey, alreadyRevoked: changes === 0 } : null;
  }
  const { rowCount } = await db.orm
    .update(pgApiKeys)
    .set({ revokedAt })
    .where(and(eq(pgApiKeys.keyId, keyId), isNull(pgApiKeys.revokedAt)));
  const [apiKey] = await db.orm
    .select(pgApiKeyColumns)
    .from(pgApiKeys)
    .where(eq(pgApiKeys.keyId, keyId));
  return apiKey ? { apiKey, alreadyRevoked: rowCount === 0 } : null;
}

export interface ApiKeyForAuth {
  key: typeof apiKeys.$inferSelect;
  permissions: Permission[];
  organizationId: number;
}

const activeKeyById = perDatabase((db: SqliteDb) =>
  db.orm
    .select({ key: apiKeys, permissions: roles.permissions })
    .from(apiKeys)
    .innerJoin(roles, eq(roles.id, apiKeys.roleId))
    .where(and(eq(apiKeys.keyId, sql.placeholder('keyId')), isNull(apiKeys.revokedAt)))
    .prepare(),
);

// Every request runs this: named, so each connection parses and plans it once.
const activeKeyByIdOnPostgres = perDatabase((db: PostgresDb) =>
  db.orm
    .select({ key: pgApiKeys, permissions: pgRoles.permissions })
    .from(pgApiKeys)
    .innerJoin(pgRoles, eq(pgRoles.id, pgApiKeys.roleId))
    .where(and(eq(pgApiKeys.keyId, sql.placeholder('keyId')), isNull(pgApiKeys.revokedAt)))
    .prepare('agentline_active_key_by_id'),
);

/** The active (not revoked) key with this key id, with its role's permissions; else null. */
export async function findApiKeyForAuth(db: Db, keyId: string): Promise<ApiKeyForAuth | null> {
  const row =
    db.kind === 'sqlite'
      ? activeKeyById(db).get({ keyId })
      : (await activeKeyByIdOnPostgres(db).execute({ keyId }))[0];
  return row
    ? { key: row.key, permissions: row.permissions, organizationId: row.key.organizationId }
    : null;
}

export interface ApiKeyPrincipal {
  apiKeyId: number;
  keyId: string;
  keyName: string;
  organizationId: number;
  permissions: Permission[];
  lastUsedAt: string | null;
}

/**
 * Compared against when the key id is unknown, so an unknown id costs the same hash and compare
 * as a wrong secret and response times do not tell which key ids exist.
 */
const UNKNOWN_KEY_SECRET_HASH = hashApiKeySecret('no key has this secret');

/**
 * Who a presented `Service-API-Key` value is, or null when it is malformed, unknown, revoked or
 * its secret does not match (callers answer all of these the same way: 401). `secretMatches` is
 * a parameter so tests can see that both refusals do the same work.
 */
export async function authenticateApiKey(
  db: Db,
  presentedKey: string,
  secretMatches = apiKeySecretMatches,
): Promise<ApiKeyPrincipal | null> {
  const parts = parseApiKey(presentedKey);
  if (!parts) return null;
  const found = await findApiKeyForAuth(db, parts.keyId);
  const matches = secretMatches(parts.secret, found?.key.secretHash ?? UNKNOWN_KEY_SECRET_HASH);
  if (!found || !matches) return null;
  return {
    apiKeyId: found.key.id,
    keyId: found.key.keyId,
    keyName: found.key.name,
    organizationId: found.organizationId,
    permissions: found.permissions,
    lastUsedAt: found.key.lastUsedAt,
  };
}

const LAST_USED_RESOLUTION_MS = 60_000;

/** Whether a key last used at `lastUsedAt` is due a new last-used write (read-only otherwise). */
export function apiKeyUseIsStale(lastUsedAt: string | null, now = new Date()): boolean {
  return lastUsedAt === null || Date.parse(lastUsedAt) < now.getTime() - LAST_USED_RESOLUTION_MS;
}

/** Notes that the key was used; writes at most once a minute per key to keep requests read-only. */
export async function recordApiKeyUse(db: Db, apiKeyId: number, now = new Date()): Promise<void> {
  const staleBefore = new Date(now.getTime() - LAST_USED_RESOLUTION_MS).toISOString();
  const lastUsedAt = now.toISOString();
  if (db.kind === 'sqlite') {
    db.orm
      .update(apiKeys)
      .set({ lastUsedAt })
      .where(
        and(
          eq(apiKeys.id, apiKeyId),
          or(isNull(apiKeys.lastUsedAt), lt(apiKeys.lastUsedAt, staleBefore)),
        ),
      )
      .run();
    return;
  }
  await db.orm
    .update(pgApiKeys)
    .set({ lastUsedAt })
    .where(
      and(
        eq(pgApiKeys.id, apiKeyId),
        or(isNull(pgApiKeys.lastUsedAt), lt(pgApiKeys.lastUsedAt, staleBefore)),
      ),
    );
}
