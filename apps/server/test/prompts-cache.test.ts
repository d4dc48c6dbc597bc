// Prompt pages are kept per organization and query until the organization's records are loaded
// again; then the next request sees the new records.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { platformRecordsSchema } from '../src/records/format.js';
import { loadPlatformRecords } from '../src/records/loader.js';
import {
  createTenant,
  createTestApi,
  type Schemas,
  type Tenant,
  type TestApi,
} from './support/harness.js';

let api: TestApi;
let acme: Tenant;
let globex: Tenant;

const LLM = { model: 'gpt-4o', provider: 'openai', version: null } as const;
const load = (organizationId: number, prompts: Array<{ name: string; description?: string }>) =>
  loadPlatformRecords(
    api.db,
    organizationId,
    platformRecordsSchema.parse({
      prompts: prompts.map((p) => ({ ...p, context: 'Help.', llm_config: LLM })),
    }),
  );

beforeAll(async () => {
  api = await createTestApi();
  acme = await createTenant(api.db, 'Acme');
  globex = await createTenant(api.db, 'Globex');
  await load(acme.organizationId, [{ name: 'Greeter', description: 'first' }]);
  await load(globex.organizationId, [{ name: 'Globex prompt' }]);
});

afterAll(() => api.close());

const list = (query = '', key = acme.key) =>
  api.request<Schemas['PromptListResponse']>('GET', `/api/v1/prompts/${query}`, { key });

describe('prompt page cache', () => {
  it('answers a repeated query with the same page', async () => {
    const first = await list();
    const second = await list();
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('shows a load of records at the next request', async () => {
    await list();
    await load(acme.organizationId, [
      { name: 'Greeter', description: 'second' },
      { name: 'Closer' },
    ]);
    const after = await list();
    expect(after.body.items.map((p) => [p.name, p.description])).toEqual([
      ['Greeter', 'second'],
      ['Closer', null],
    ]);
  });

  it('keeps pages of different queries, projections and organizations apart', async () => {
    const named = await list('?fields=name');
    const described = await list('?fields=description');
    expect(Object.keys(named.body.items[0]!).sort()).toEqual(['id', 'name']);
    expect(Object.keys(described.body.items[0]!).sort()).toEqual(['description', 'id']);
    const other = await list('?fields=name', globex.key);
    expect(other.body.items.map((p) => p.name)).toEqual(['Globex prompt']);
  });
});
