// A fresh app on a fresh database (test-database.ts: SQLite or PostgreSQL) per test file, tenants with keys of chosen
// permissions, and a `request` that checks every response against the spec before returning it.

import { createApp, type App } from '../../src/app.js';
import type { Db } from '../../src/db/client.js';
import { createKeyWithOwnRole } from '../../src/db/repositories/api-keys.js';
import { createOrganization } from '../../src/db/repositories/organizations.js';
import { PERMISSIONS, type Permission } from '../../src/domain/permissions.js';
import { specValidator } from './contract.js';
import { createTestDb } from './test-database.js';

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export interface RequestOptions {
  key?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface TestApi {
  db: Db;
  app: App;
  /** Sends a request to the app in-process and fails unless the response matches the spec. */
  request<T = any>(method: string, url: string, options?: RequestOptions): Promise<ApiResponse<T>>;
  close(): Promise<void>;
}

/** `db` defaults to a fresh migrated database of the backend under test. */
export async function createTestApi(db?: Db): Promise<TestApi> {
  db ??= await createTestDb();
  const app = createApp({ db });
  return {
    db,
    app,
    async request(method, url, { key, body, headers = {} } = {}) {
      const init: RequestInit = { method, headers: { ...headers } };
      if (key) (init.headers as Record<string, string>)['Service-API-Key'] = key;
      if (body !== undefined) {
        (init.headers as Record<string, string>)['Content-Type'] ??= 'application/json';
        init.body = typeof body === 'string' ? body : JSON.stringify(body);
      }
      const response = await app.request(url, init);
      const text = await response.text();
      const parsed = text ? JSON.parse(text) : undefined;
      specValidator.validateResponse({
        method,
        url,
        status: response.status,
        headers: response.headers,
        body: parsed,
      });
      return { status: response.status, headers: response.headers, body: parsed };
    },
    close: () => db.close(),
  };
}

export interface Tenant {
  organizationId: number;
  /** A key whose role has every permission. */
  key: string;
}

export async function createTenant(db: Db, name: string): Promise<Tenant> {
  const organization = await createOrganization(db, name);
  return {
    organizationId: organization.id,
    key: await createKey(db, organization.id, PERMISSIONS),
  };
}

let roleCounter = 0;

/** A key of a new role that has exactly these permissions. */
export async function createKey(
  db: Db,
  organizationId: number,
  permissions: readonly Permission[],
): Promise<string> {
  roleCounter += 1;
  return createKeyWithOwnRole(db, {
    organizationId,
    roleName: `role-${roleCounter}`,
    keyName: `key-${roleCounter}`,
    permissions,
  });
}
