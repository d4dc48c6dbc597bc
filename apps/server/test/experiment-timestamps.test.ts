// An experiment is never updated before it was created, nor started or stopped before that:
// every writer of experiments (the API's create, update, start and stop, and `agentline load`
// creating and replacing a draft) leaves created_at <= updated_at, started_at and stopped_at.

import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { platformRecordsSchema } from '../src/records/format.js';
import { loadPlatformRecords } from '../src/records/loader.js';
import { RECORDS_EXAMPLE } from './fixtures/cli-harness.js';
import { type Schemas, type Tenant, type TestApi } from './support/harness.js';
import {
  createRoutingTestbed,
  experimentBody,
  type RoutingFixture,
} from './support/routing-fixture.js';

let api: TestApi;
let acme: Tenant;
let fx: RoutingFixture;

beforeAll(async () => {
  ({ api, acme, fx } = await createRoutingTestbed());
});

afterAll(() => api.close());

/** Every experiment of the organization has created_at at or before its other moments. */
async function expectCreatedFirst(writer: string): Promise<void> {
  const res = await api.request<Schemas['ExperimentListResponse']>(
    'GET',
    '/api/v1/experiments/?limit=1000',
    { key: acme.key },
  );
  expect(res.status).toBe(200);
  expect(res.body.items.length, writer).toBeGreaterThan(0);
  for (const item of res.body.items) {
    for (const moment of [item.updated_at, item.started_at, item.stopped_at]) {
      if (moment)
        expect(moment >= item.created_at!, `${writer}: ${JSON.stringify(item)}`).toBe(true);
    }
  }
}

describe('experiment timestamps', () => {
  it('keeps created_at first through every writer', async () => {
    const records = platformRecordsSchema.parse(JSON.parse(readFileSync(RECORDS_EXAMPLE, 'utf8')));
    // A load that took a second from its start to the experiment's insert.
    await loadPlatformRecords(api.db, acme.organizationId, records, new Date(Date.now() - 1000));
    await expectCreatedFirst('load (create)');
    await loadPlatformRecords(api.db, acme.organizationId, records);
    await expectCreatedFirst('load (replace the draft)');

    const body = experimentBody(fx.targets.second, [fx.agents.pinned, fx.agents.alsoPinned]);
    const created = await api.request<Schemas['Experiment']>('POST', '/api/v1/experiments/', {
      key: acme.key,
      body,
    });
    await expectCreatedFirst('create');
    const path = `/api/v1/experiments/${created.body.id}`;
    const { target_id: _targetId, ...update } = { ...body, name: 'Renamed' };
    expect((await api.request('PUT', path, { key: acme.key, body: update })).status).toBe(200);
    await expectCreatedFirst('update');
    expect((await api.request('POST', `${path}/start`, { key: acme.key })).status).toBe(200);
    await expectCreatedFirst('start');
    expect((await api.request('POST', `${path}/stop`, { key: acme.key })).status).toBe(200);
    await expectCreatedFirst('stop');
  });
});
