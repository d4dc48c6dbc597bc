// The webhook endpoint tests' app: Acme and Globex on a fresh database, requests to
// /api/v1/webhooks/endpoints as Acme. No dispatcher runs beside createTestApi's app, so nothing is
// delivered: endpoints may name an address nothing listens on, and private addresses are allowed
// for that (test/webhooks-endpoints-input.test.ts checks the refusals with them off).

import { afterAll, beforeAll } from 'vitest';
import type { Db } from '../../src/db/engine/client.js';
import { runSteps } from '../../src/db/engine/portable-sql.js';
import {
  webhookEndpointPositions,
  type WebhookPositions,
} from '../../src/db/repositories/webhook-endpoints.js';
import { createTenant, createTestApi, type Tenant, type TestApi } from './harness.js';

export interface WebhooksTestbed {
  api: TestApi;
  acme: Tenant;
  globex: Tenant;
}

/** Creates the testbed before the file's tests and hands it to `onReady`; closes it after them. */
export function useWebhooksTestbed(onReady: (testbed: WebhooksTestbed) => void) {
  let testbed: WebhooksTestbed | undefined;
  beforeAll(async () => {
    const api = await createTestApi(undefined, {
      webhookPolicy: { allowHttp: false, allowPrivateAddresses: true },
    });
    testbed = {
      api,
      acme: await createTenant(api.db, 'Acme'),
      globex: await createTenant(api.db, 'Globex'),
    };
    onReady(testbed);
  });
  afterAll(() => testbed?.api.close());

  /** `T` is the body expected at the status the test asserts. */
  const call = <T>(method: string, path: string, body?: unknown, key?: string) => {
    if (!testbed) throw new Error('the webhooks testbed is created in beforeAll');
    return testbed.api.request<T>(method, `/api/v1/webhooks/endpoints${path}`, {
      key: key ?? testbed.acme.key,
      body,
    });
  };
  return { call };
}

/** An endpoint's stored positions in the events and in its own history (null: no such endpoint). */
export function findWebhookEndpointPositions(
  db: Db,
  organizationId: number,
  id: number,
): Promise<WebhookPositions | null> {
  return runSteps(db, () => webhookEndpointPositions(organizationId, id));
}
