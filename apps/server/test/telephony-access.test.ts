// Who may run the A2P check, on which channels and numbers, and what input it refuses. Every
// response is checked against the spec by the harness.

import { NotFoundError, UnprocessableEntityError, createClient } from '@agentline/sdk';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { platformRecordsSchema } from '../src/records/format.js';
import { loadedIds } from '../src/records/load-result.js';
import { loadPlatformRecords } from '../src/records/loader.js';
import { channels, telephonyNumbers } from '../src/db/schema/sqlite.js';
import { PERMISSIONS } from '../src/vocabulary/permissions.js';
import {
  createKey,
  createTenant,
  createTestApi,
  type Schemas,
  type Tenant,
  type TestApi,
} from './support/harness.js';
import { startLiveServer } from './support/live-server.js';
import { stringContaining } from './support/matchers.js';
import { queryTestDb } from './support/test-database.js';

const APPROVED_LINE = '+14155550100';
const UNREGISTERED_LINE = '+14155550101';
const SHARED_NUMBER = '+14155550199';

let api: TestApi;
let acme: Tenant;
let globex: Tenant;
const acmeIds: Record<string, number> = {};
let globexLineId: number;

function checkUrl(channelId: number | string) {
  return `/api/v1/channels/telephony/${channelId}/numbers/verify-a2p-compliance`;
}

/** An organization's records: one approved number, and one more in no messaging service. */
function records(organization: string, numbers: string[], approvedNumbers: string[]) {
  return platformRecordsSchema.parse({
    channels: [
      { name: 'Phone line', kind: 'telephony', numbers },
      { name: 'Other line', kind: 'telephony', provider: 'records', numbers: ['+14155550177'] },
      { name: 'Chat', kind: 'web_chat' },
      { name: 'Texts', kind: 'sms' },
    ],
    messaging_services: [{ sid: `MG-${organization}`, name: 'SMS', numbers: approvedNumbers }],
    a2p_brands: [{ sid: `BN-${organization}`, status: 'APPROVED' }],
    a2p_campaigns: [
      {
        sid: `QE-${organization}`,
        messaging_service: `MG-${organization}`,
        brand: `BN-${organization}`,
        campaign_status: 'VERIFIED',
      },
    ],
  });
}

beforeAll(async () => {
  api = await createTestApi();
  acme = await createTenant(api.db, 'acme');
  globex = await createTenant(api.db, 'globex');
  const acmeLoad = await loadPlatformRecords(
    api.db,
    acme.organizationId,
    records('acme', [APPROVED_LINE, UNREGISTERED_LINE, SHARED_NUMBER], [APPROVED_LINE]),
  );
  Object.assign(acmeIds, loadedIds(acmeLoad.records, 'channels'));
  // Globex holds the same number as acme, on an approved path of its own.
  const globexLoad = await loadPlatformRecords(
    api.db,
    globex.organizationId,
    records('globex', [SHARED_NUMBER], [SHARED_NUMBER]),
  );
  globexLineId = loadedIds(globexLoad.records, 'channels')['Phone line']!;
});

afterAll(() => api.close());

describe('answers', () => {
  it('true for a number on an approved path, false for one in no messaging service', async () => {
    const approved = await api.request('POST', checkUrl(acmeIds['Phone line']!), {
      key: acme.key,
      body: { phone: APPROVED_LINE },
    });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ a2p_approved: true });
    expect(approved.headers.get('X-Request-Id')).toBeTruthy();

    const unregistered = await api.request('POST', checkUrl(acmeIds['Phone line']!), {
      key: acme.key,
      body: { phone: UNREGISTERED_LINE },
    });
    expect(unregistered.body).toEqual({
      a2p_approved: false,
      checks: [
        {
          name: 'messaging_service',
          passed: false,
          detail: stringContaining('no messaging service'),
        },
        { name: 'a2p_campaign', passed: null, detail: stringContaining('Not checked') },
        { name: 'campaign_verified', passed: null, detail: stringContaining('Not checked') },
        { name: 'brand_approved', passed: null, detail: stringContaining('Not checked') },
      ],
    });
  });

  it('a telephony channel stored without a provider uses the embedded records', async () => {
    const [channel] = await queryTestDb<{ id: number }>(
      api.db,
      sql`INSERT INTO ${channels} (organization_id, name, kind)
          VALUES (${acme.organizationId}, 'Bare line', 'telephony') RETURNING id`,
    );
    await queryTestDb(
      api.db,
      sql`INSERT INTO ${telephonyNumbers} (organization_id, channel_id, phone_number)
          VALUES (${acme.organizationId}, ${channel!.id}, ${APPROVED_LINE})`,
    );
    const response = await api.request('POST', checkUrl(channel!.id), {
      key: acme.key,
      body: { phone: APPROVED_LINE },
    });
    expect(response.body).toMatchObject({ a2p_approved: true });
  });
});

describe('permission', () => {
  it('needs an API key (401)', async () => {
    const response = await api.request<Schemas['ErrorResponse']>(
      'POST',
      checkUrl(acmeIds['Phone line']!),
      {
        body: { phone: APPROVED_LINE },
      },
    );
    expect(response.status).toBe(401);
    expect(response.body.code).toBe('UNAUTHENTICATED');
  });

  it('needs CHANNELS_READ (403 naming it), checked before the body', async () => {
    const key = await createKey(
      api.db,
      acme.organizationId,
      PERMISSIONS.filter((permission) => permission !== 'CHANNELS_READ'),
    );
    for (const body of [{ phone: APPROVED_LINE }, { phone: 'not a number' }]) {
      const response = await api.request<Schemas['ErrorResponse']>(
        'POST',
        checkUrl(acmeIds['Phone line']!),
        { key, body },
      );
      expect(response.status).toBe(403);
      expect(response.body.code).toBe('PERMISSION_DENIED');
      expect(response.body.detail).toContain('CHANNELS_READ');
    }
  });

  it('CHANNELS_READ alone is enough', async () => {
    const key = await createKey(api.db, acme.organizationId, ['CHANNELS_READ']);
    const response = await api.request('POST', checkUrl(acmeIds['Phone line']!), {
      key,
      body: { phone: APPROVED_LINE },
    });
    expect(response.status).toBe(200);
  });
});

describe('tenancy and 404s', () => {
  async function notFoundDetail(channelId: number | string, phone = APPROVED_LINE) {
    const response = await api.request<Schemas['ErrorResponse']>('POST', checkUrl(channelId), {
      key: acme.key,
      body: { phone },
    });
    expect(response.status).toBe(404);
    expect(response.body.code).toBe('NOT_FOUND');
    return response.body.detail;
  }

  it("another organization's channel answers exactly like one that does not exist", async () => {
    const foreign = await notFoundDetail(globexLineId);
    const unknown = await notFoundDetail(999_999);
    expect(foreign.replace(String(globexLineId), 'N')).toBe(unknown.replace('999999', 'N'));
  });

  it.each(['Chat', 'Texts'])('a %s channel is not a telephony channel (404)', async (name) => {
    const detail = await notFoundDetail(acmeIds[name]!);
    expect(detail).toContain('No telephony channel');
  });

  it('a number that is not an incoming number of the channel is a 404', async () => {
    expect(await notFoundDetail(acmeIds['Phone line']!, '+19995550100')).toContain(
      'is not an incoming number',
    );
    // The organization's other channel does not lend its numbers.
    expect(await notFoundDetail(acmeIds['Other line']!, APPROVED_LINE)).toContain(
      'is not an incoming number',
    );
  });

  it("reads only the organization's own provider records", async () => {
    const acmeAnswer = await api.request('POST', checkUrl(acmeIds['Phone line']!), {
      key: acme.key,
      body: { phone: SHARED_NUMBER },
    });
    expect(acmeAnswer.body).toMatchObject({ a2p_approved: false });
    const globexAnswer = await api.request('POST', checkUrl(globexLineId), {
      key: globex.key,
      body: { phone: SHARED_NUMBER },
    });
    expect(globexAnswer.body).toMatchObject({ a2p_approved: true });
  });
});

describe('validation (422)', () => {
  it.each([
    ['no plus sign', '14155550100', ['string_pattern_mismatch']],
    ['a leading zero', '+04155550100', ['string_pattern_mismatch']],
    ['spaces', '+1 415 555 0100', ['string_pattern_mismatch']],
    ['dashes', '+1-415-555-0100', ['string_pattern_mismatch']],
    // Past the spec's 16 characters as well as E.164's 15 digits.
    ['more than 15 digits', '+1415555010012345', ['string_too_long', 'string_pattern_mismatch']],
    ['only a country code', '+1', ['string_pattern_mismatch']],
    ['an empty string', '', ['string_pattern_mismatch']],
  ])('phone with %s', async (_, phone, types) => {
    const response = await api.request<Schemas['HTTPValidationError']>(
      'POST',
      checkUrl(acmeIds['Phone line']!),
      {
        key: acme.key,
        body: { phone },
      },
    );
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual(
      types.map((type): unknown => expect.objectContaining({ loc: ['body', 'phone'], type })),
    );
  });

  it.each([
    ['missing', {}, 'missing'],
    ['a number', { phone: 14155550100 }, 'string_type'],
    ['null', { phone: null }, 'string_type'],
  ])('phone %s', async (_, body, type) => {
    const response = await api.request<Schemas['HTTPValidationError']>(
      'POST',
      checkUrl(acmeIds['Phone line']!),
      {
        key: acme.key,
        body,
      },
    );
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([
      expect.objectContaining({ loc: ['body', 'phone'], type }),
    ]);
  });

  it('a body that is not JSON', async () => {
    const response = await api.request<Schemas['HTTPValidationError']>(
      'POST',
      checkUrl(acmeIds['Phone line']!),
      {
        key: acme.key,
        body: '{"phone": ',
      },
    );
    expect(response.status).toBe(422);
    expect(response.body.detail[0]?.type).toBe('json_invalid');
  });

  it.each([
    ['abc', 'int_parsing'],
    ['1.5', 'int_parsing'],
    ['0', 'greater_than_equal'],
  ])('channel_id %s', async (channelId, type) => {
    const response = await api.request<Schemas['HTTPValidationError']>(
      'POST',
      checkUrl(channelId),
      {
        key: acme.key,
        body: { phone: APPROVED_LINE },
      },
    );
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([
      expect.objectContaining({ loc: ['path', 'channel_id'], type }),
    ]);
  });
});

describe('through the SDK over HTTP', () => {
  it('answers, and raises typed errors for 404 and 422', async () => {
    const server = await startLiveServer(api.app);
    try {
      const client = createClient({ apiKey: acme.key, baseUrl: server.baseUrl });
      const channelId = acmeIds['Phone line']!;
      await expect(
        client.telephony.verifyA2pCompliance(channelId, { phone: APPROVED_LINE }),
      ).resolves.toMatchObject({ a2p_approved: true });
      await expect(
        client.telephony.verifyA2pCompliance(channelId, { phone: '+19995550100' }),
      ).rejects.toBeInstanceOf(NotFoundError);
      await expect(
        client.telephony.verifyA2pCompliance(channelId, { phone: '555-0100' }),
      ).rejects.toBeInstanceOf(UnprocessableEntityError);
    } finally {
      await server.close();
    }
  });
});
