// Acme's and Globex's prompts for the GET /api/v1/prompts/ list tests (prompts-list-*.test.ts),
// loaded the way `agentline load` loads them (fixtures/prompts-records.ts), and the list read as
// Acme.

import { afterAll, beforeAll, expect } from 'vitest';
import { ACME_RECORDS, GLOBEX_RECORDS, loadRecords } from '../fixtures/prompts-records.js';
import { createTenant, createTestApi, type Schemas } from './harness.js';

/** A prompt listed without `fields`: every property is there. */
export type PromptItem = Required<Schemas['Prompt']>;

/** A page of prompts listed without `fields`. */
type ItemPage = Omit<Schemas['PromptListResponse'], 'items'> & { items: PromptItem[] };

async function openPromptsList() {
  const api = await createTestApi();
  const acme = await createTenant(api.db, 'Acme');
  const globex = await createTenant(api.db, 'Globex');
  await loadRecords(api.db, acme.organizationId, ACME_RECORDS);
  await loadRecords(api.db, globex.organizationId, GLOBEX_RECORDS);
  /**
   * `T` is the body expected: by default a page of whole prompts; `Schemas['PromptListResponse']`
   * for a page narrowed by `fields`, or the errors of a 422.
   */
  const list = <T = ItemPage>(query: string) =>
    api.request<T>('GET', `/api/v1/prompts/${query}`, { key: acme.key });
  const idsOf = async (query: string): Promise<number[]> => {
    const res = await list(query);
    expect(res.status).toBe(200);
    return res.body.items.map((item) => item.id);
  };
  return { api, acme, globex, list, idsOf };
}

export type PromptsList = Awaited<ReturnType<typeof openPromptsList>>;

/** Opens the list before the file's tests and hands it to `onReady`; closes it after them. */
export function usePromptsList(onReady: (opened: PromptsList) => void): void {
  let opened: PromptsList | undefined;
  beforeAll(async () => {
    opened = await openPromptsList();
    onReady(opened);
  });
  afterAll(() => opened?.api.close());
}

export function search(field: string, value: string): string {
  return `?search_fields=${field}&search_field_values=${encodeURIComponent(value)}`;
}
