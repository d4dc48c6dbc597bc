// API keys: the key format (domain), issuing and authenticating them (use-cases) over the rows the
// repository stores and reads.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../src/db/engine/client.js';
import { findApiKeyForAuth, listApiKeys, revokeApiKey } from '../src/db/repositories/api-keys.js';
import { createOrganization } from '../src/db/repositories/organizations.js';
import { createRole } from '../src/db/repositories/roles.js';
import {
  apiKeySecretMatches,
  formatApiKey,
  generateApiKey,
  hashApiKeySecret,
  isKeyId,
  parseApiKey,
} from '../src/domain/api-keys.js';
import { createApiKey } from '../src/use-cases/api-keys.js';
import type { ApiKeyPrincipal } from '../src/use-cases/authentication.js';
import {
  authenticateApiKey,
  authenticateApiKeyTrusted,
  noteApiKeyUse,
  recordApiKeyUse,
} from '../src/use-cases/authentication.js';
import { failNextStatement, sentStatements } from './support/sent-statements.js';
import { createTestDb } from './support/test-database.js';

describe('key format', () => {
  it('generates agl_<12 [a-z0-9]>_<32 base62> keys that parse back', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 50; i += 1) {
      const parts = generateApiKey();
      const key = formatApiKey(parts);
      expect(key).toMatch(/^agl_[a-z0-9]{12}_[A-Za-z0-9]{32}$/);
      expect(parseApiKey(key)).toEqual(parts);
      expect(isKeyId(parts.keyId)).toBe(true);
      seen.add(parts.secret);
    }
    expect(seen.size).toBe(50);
  });

  it.each([
    '',
    'agl_abc_def',
    'agl_ABCDEFGHIJKL_0123456789abcdefghijABCDEFGHIJ0123',
    'xyz_abcdefghijkl_0123456789abcdefghijABCDEFGHIJ0123',
    'agl_abcdefghijkl_0123456789abcdefghijABCDEFGHIJ012_',
    ' agl_abcdefghijkl_0123456789abcdefghijABCDEFGHIJ0123',
  ])('rejects the malformed key %j', (text) => {
    expect(parseApiKey(text)).toBeNull();
  });

  it('stores a SHA-256 hex of the secret and compares it in constant time', () => {
    const { secret } = generateApiKey();
    const hash = hashApiKeySecret(secret);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(apiKeySecretMatches(secret, hash)).toBe(true);
    // One character changed (a secret may already end in "x": then it becomes "y").
    const changed = `${secret.slice(0, -1)}${secret.endsWith('x') ? 'y' : 'x'}`;
    expect(apiKeySecretMatches(changed, hash)).toBe(false);
    expect(apiKeySecretMatches(secret, 'not-a-hash')).toBe(false);
  });
});

describe('keys in the database', () => {
  let db: Db;
  let organizationId: number;
  let roleId: number;

  beforeAll(async () => {
    db = await createTestDb();
    organizationId = (await createOrganization(db, 'Acme')).id;
    roleId = (
      await createRole(db, { organizationId, name: 'reader', permissions: ['EVENTS_READ'] })
    ).id;
  });

  afterAll(() => db.close());

  it('finds an active key with its role permissions and organization for the auth middleware', async () => {
    const { apiKey, fullKey } = await createApiKey(db, { organizationId, roleId, name: 'ci' });
    expect(apiKey).not.toHaveProperty('secretHash');
    const found = await findApiKeyForAuth(db, apiKey.keyId);
    expect(found).toMatchObject({
      organizationId,
      permissions: ['EVENTS_READ'],
      key: { name: 'ci' },
    });
    expect(found!.key.secretHash).toBe(hashApiKeySecret(parseApiKey(fullKey)!.secret));
    expect(await findApiKeyForAuth(db, 'unknownkey00')).toBeNull();
  });

  it('authenticates only the exact key, and not once revoked', async () => {
    const { apiKey, fullKey } = await createApiKey(db, { organizationId, roleId, name: 'app' });
    expect(await authenticateApiKey(db, fullKey)).toEqual({
      apiKeyId: apiKey.id,
      keyId: apiKey.keyId,
      keyName: 'app',
      organizationId,
      permissions: ['EVENTS_READ'],
      lastUsedAt: null,
    });
    const wrongSecret = formatApiKey({ keyId: apiKey.keyId, secret: generateApiKey().secret });
    expect(await authenticateApiKey(db, wrongSecret)).toBeNull();
    expect(await authenticateApiKey(db, 'garbage')).toBeNull();

    expect(await revokeApiKey(db, apiKey.keyId)).toMatchObject({ alreadyRevoked: false });
    expect(await authenticateApiKey(db, fullKey)).toBeNull();
    expect(await findApiKeyForAuth(db, apiKey.keyId)).toBeNull();
    const again = await revokeApiKey(db, apiKey.keyId);
    expect(again).toMatchObject({ alreadyRevoked: true });
    expect(await revokeApiKey(db, 'unknownkey00')).toBeNull();
  });

  it('records use at most once a minute per key', async () => {
    const { apiKey } = await createApiKey(db, { organizationId, roleId, name: 'busy' });
    const lastUsed = async () =>
      (await listApiKeys(db, organizationId)).find((key) => key.id === apiKey.id)!.lastUsedAt;
    await recordApiKeyUse(db, apiKey.id, new Date('2026-03-17T10:00:00.000Z'));
    await recordApiKeyUse(db, apiKey.id, new Date('2026-03-17T10:00:30.000Z'));
    expect(await lastUsed()).toBe('2026-03-17T10:00:00.000Z');
    await recordApiKeyUse(db, apiKey.id, new Date('2026-03-17T10:01:01.000Z'));
    expect(await lastUsed()).toBe('2026-03-17T10:01:01.000Z');
  });

  describe('used by many requests at once', () => {
    const lastUseWrites = (statements: Array<{ text: string }>) =>
      statements.filter(({ text }) => /^UPDATE "api_keys" SET "last_used_at"/.test(text)).length;

    it('is looked up once by the requests that present it together, and shared', async () => {
      const alone = await createApiKey(db, { organizationId, roleId, name: 'alone' });
      const burst = await createApiKey(db, { organizationId, roleId, name: 'lookups' });
      const wrong = formatApiKey({ keyId: burst.apiKey.keyId, secret: generateApiKey().secret });
      const sixteen = (presented: string) =>
        Promise.all(Array.from({ length: 16 }, () => authenticateApiKeyTrusted(db, presented)));
      let principals: Array<ApiKeyPrincipal | null> = [];
      let refused: Array<ApiKeyPrincipal | null> = [];
      const statements = await sentStatements(db, async () => {
        await authenticateApiKeyTrusted(db, alone.fullKey);
        principals = await sixteen(burst.fullKey);
        refused = await sixteen(wrong);
        // A failure is not remembered: the next request with it looks it up again.
        await authenticateApiKeyTrusted(db, wrong);
      });
      const lookupsOf = (keyId: string) =>
        statements.filter(({ values }) => values.includes(keyId)).length;
      const oneLookup = lookupsOf(alone.apiKey.keyId);
      expect(oneLookup).toBeGreaterThan(0);
      // The key's sixteen, the wrong secret's sixteen, the wrong secret again: three lookups.
      expect(lookupsOf(burst.apiKey.keyId)).toBe(3 * oneLookup);
      expect(new Set(principals).size).toBe(1);
      expect(principals[0]).toMatchObject({ keyId: burst.apiKey.keyId, keyName: 'lookups' });
      expect(refused).toEqual(Array<null>(16).fill(null));
    });

    it('forgets a lookup that failed, so the next request looks the key up again', async () => {
      const { fullKey } = await createApiKey(db, { organizationId, roleId, name: 'flaky' });
      const gone = new Error('the database went away');
      failNextStatement(db, gone);
      const [first, second] = await Promise.allSettled([
        authenticateApiKeyTrusted(db, fullKey),
        authenticateApiKeyTrusted(db, fullKey),
      ]);
      // The request that came while the lookup ran shared its failure.
      expect(first).toEqual({ status: 'rejected', reason: gone });
      expect(second).toEqual({ status: 'rejected', reason: gone });
      expect(await authenticateApiKeyTrusted(db, fullKey)).toMatchObject({ keyName: 'flaky' });
    });

    it('has its use written once by the requests that find it due together', async () => {
      const { apiKey, fullKey } = await createApiKey(db, { organizationId, roleId, name: 'burst' });
      // One principal, as a process's trusted authentication hands it to each request of the key.
      const principal = (await authenticateApiKey(db, fullKey))!;
      const burst = (now: Date) =>
        Promise.all(Array.from({ length: 16 }, () => noteApiKeyUse(db, principal, now)));
      const statements = await sentStatements(db, async () => {
        await burst(new Date('2026-03-17T10:00:00.000Z'));
        // Within the minute, no write; after it, one again.
        await burst(new Date('2026-03-17T10:00:59.000Z'));
        await burst(new Date('2026-03-17T10:01:01.000Z'));
      });
      expect(lastUseWrites(statements)).toBe(2);
      expect(principal.lastUsedAt).toBe('2026-03-17T10:01:01.000Z');
      const stored = await listApiKeys(db, organizationId);
      expect(stored.find((key) => key.id === apiKey.id)!.lastUsedAt).toBe(principal.lastUsedAt);
    });

    it('hands the turn back when the write fails, so the next request writes', async () => {
      const { fullKey } = await createApiKey(db, { organizationId, roleId, name: 'failing' });
      const principal = (await authenticateApiKey(db, fullKey))!;
      const closed = await createTestDb();
      await closed.close();
      await expect(noteApiKeyUse(closed, principal)).rejects.toThrow();
      expect(principal.lastUsedAt).toBeNull();
      await noteApiKeyUse(db, principal);
      expect(principal.lastUsedAt).not.toBeNull();
    });
  });
});
