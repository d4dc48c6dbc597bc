// A fresh app on a fresh database (test-database.ts: SQLite or PostgreSQL) per test file, tenants with keys of chosen
// permissions, and a `request` that checks every response against the spec before returning it.

import { createApp, type App, type AppOptions } from '../../src/app.js';
import type { Db } from '../../src/db/engine/client.js';
import { createKeyWithOwnRole } from '../../src/use-cases/api-keys.js';
import { createOrganization } from '../../src/db/repositories/organizations.js';
import { PERMISSIONS, type Permission } from '../../src/vocabulary/permissions.js';
import type { components } from '../../src/spec-types.js';
import { specValidator } from './contract.js';
import { createTestDb } from './test-database.js';

/**
 * The spec's schemas by name, generated from it: a test names the body it expects, as in
 * `api.request<Schemas['EventListResponse']>(...)` or, for an error, `Schemas['ErrorResponse']`
 * (`Schemas['HTTPValidationError']` for a 422).
 */
export type Schemas = components['schemas'];

export interface ApiResponse<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
}

/**
 * Whether the answer is a 422, whose body every operation of the spec declares as
 * `HTTPValidationError` (and `request` has checked it is one): narrows an answer read as
 * `unknown`, such as a fuzzed request's, to its validation errors.
 */
export function isValidationFailure(
  response: ApiResponse,
): response is ApiResponse<Schemas['HTTPValidationError']> {
  return response.status === 422;
}

export interface RequestOptions {
  key?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface TestApi {
  db: Db;
  app: App;
  /**
   * Sends a request to the app in-process and fails unless the response matches the spec.
   * `T` is the body the test expects at the status it asserts; the spec check is what holds the
   * body to a schema, so `T` stays `unknown` where a test reads no body or any status will do.
   */
  request<T = unknown>(
    method: string,
    url: string,
    options?: RequestOptions,
  ): Promise<ApiResponse<T>>;
  close(): Promise<void>;
}

/** `db` defaults to a fresh migrated database of the backend under test. */
export async function createTestApi(
  db?: Db,
  options: Omit<AppOptions, 'db'> = {},
): Promise<TestApi> {
  db ??= await createTestDb();
  const app = createApp({ db, ...options });
  return {
    db,
    app,
    async request<T>(
      method: string,
      url: string,
      { key, body, headers = {} }: RequestOptions = {},
    ) {
      const requestHeaders: Record<string, string> = { ...headers };
      const init: RequestInit = { method, headers: requestHeaders };
      if (key) requestHeaders['Service-API-Key'] = key;
      if (body !== undefined) {
        requestHeaders['Content-Type'] ??= 'application/json';
        init.body = typeof body === 'string' ? body : JSON.stringify(body);
      }
      const response = await app.request(url, init);
      // A stream never ends by itself: its status and headers are the answer checked here
      // (support/event-stream.ts reads streams); closing it frees its place.
      const streaming = response.headers.get('content-type')?.startsWith('text/event-stream');
      if (streaming) await response.body?.cancel();
      const text = streaming ? '' : await response.text();
      const parsed: unknown = text ? JSON.parse(text) : undefined;
      specValidator.validateResponse({
        method,
        url,
        status: response.status,
        headers: response.headers,
        body: parsed,
      });
      // The body has just matched the spec's schema for its status; `T` names the one expected.
      return { status: response.status, headers: response.headers, body: parsed as T };
    },
    close: async () => {
      await options.eventReaders?.close();
      await db.close();
    },
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
