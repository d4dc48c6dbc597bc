// Who a presented API key is: the key rules (domain/api-keys.ts: the key's form, the secret's hash,
// the constant-time compare) applied to the row the api_keys repository reads, an authentication
// trusted for a short window per process, and the key's last use, written at most once a minute.

import { perDatabase, remember } from '../db/engine/caches.js';
import type { Db } from '../db/engine/client.js';
import { findApiKeyForAuth, markApiKeyUsed } from '../db/repositories/api-keys.js';
import { apiKeySecretMatches, hashApiKeySecret, parseApiKey } from '../domain/api-keys.js';
import type { Permission } from '../vocabulary/permissions.js';

export interface ApiKeyPrincipal {
  apiKeyId: number;
  keyId: string;
  keyName: string;
  organizationId: number;
  permissions: Permission[];
  /** Moved on by noteApiKeyUse, so a remembered principal is not written again. */
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

/**
 * How long a process trusts an authentication it has made. Every process reads the key again
 * after this, so a key revoked (or a role changed) by any process or the CLI is honoured by all of
 * them within it, while a busy key costs one lookup and one hash per process this often instead of
 * on every request.
 */
export const AUTHENTICATION_TRUST_MS = 500;

/** The most authentications one process keeps: past it, the one used longest ago goes. */
const TRUSTED_AUTHENTICATIONS = 10_000;

interface TrustedAuthentication {
  /** The lookup, shared from its start by the requests that present the key while it runs. */
  principal: Promise<ApiKeyPrincipal | null>;
  trustedUntil: number;
}

// Keyed by the whole presented value, secret included, so only the same key finds an entry; it
// lives in process memory only, as the request's header itself does.
const trustedAuthentications = perDatabase(() => new Map<string, TrustedAuthentication>());

/**
 * authenticateApiKey, remembered for AUTHENTICATION_TRUST_MS from each successful lookup's start.
 * The requests that present the key while its lookup runs (a dashboard's lists sent at once) wait
 * for that lookup rather than each sending one, and share its principal. Failures are never
 * remembered, so a new key works at once and a failing one costs what it always did.
 */
export async function authenticateApiKeyTrusted(
  db: Db,
  presentedKey: string,
  now = Date.now(),
): Promise<ApiKeyPrincipal | null> {
  const trusted = trustedAuthentications(db);
  const entry = trusted.get(presentedKey);
  if (entry && entry.trustedUntil > now) return entry.principal;
  const lookup: TrustedAuthentication = {
    principal: authenticateApiKey(db, presentedKey),
    trustedUntil: now + AUTHENTICATION_TRUST_MS,
  };
  remember(trusted, presentedKey, lookup, TRUSTED_AUTHENTICATIONS);
  const forget = () => {
    if (trusted.get(presentedKey) === lookup) trusted.delete(presentedKey);
  };
  const principal = await lookup.principal.catch((error: unknown) => {
    forget();
    throw error;
  });
  if (!principal) forget();
  return principal;
}

const LAST_USED_RESOLUTION_MS = 60_000;

/** Whether a key last used at `lastUsedAt` is due a new last-used write (read-only otherwise). */
function apiKeyUseIsStale(lastUsedAt: string | null, now: Date): boolean {
  return lastUsedAt === null || Date.parse(lastUsedAt) < now.getTime() - LAST_USED_RESOLUTION_MS;
}

/** Notes that the key was used; writes at most once a minute per key to keep requests read-only. */
export async function recordApiKeyUse(db: Db, apiKeyId: number, now = new Date()): Promise<void> {
  await markApiKeyUsed(db, apiKeyId, {
    usedAt: now.toISOString(),
    staleBefore: new Date(now.getTime() - LAST_USED_RESOLUTION_MS).toISOString(),
  });
}

/**
 * Records a request's use of the principal's key when it is due (recordApiKeyUse), checked in
 * memory first so that most requests stay read-only. The principal, which a process shares
 * between the requests of one key, is moved on before the write: the requests that find it while
 * the write runs (a dashboard's lists sent at once) do not write too. A failed write hands the
 * turn back, so the next request tries again.
 */
export async function noteApiKeyUse(
  db: Db,
  principal: ApiKeyPrincipal,
  now = new Date(),
): Promise<void> {
  const before = principal.lastUsedAt;
  if (!apiKeyUseIsStale(before, now)) return;
  principal.lastUsedAt = now.toISOString();
  try {
    await recordApiKeyUse(db, principal.apiKeyId, now);
  } catch (error) {
    principal.lastUsedAt = before;
    throw error;
  }
}
