// The A2P decision rule's tables (support/a2p-scenarios.ts) run through the API (the single check
// and the channel's status list) against both telephony providers with the same expectations:
// `records` reads what `loadPlatformRecords` stored, `twilio` reads the fake Twilio over HTTP.
// Both providers must give the very same `checks`, and the pure rule gives them too. Every
// response is checked against the spec by the harness.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkA2p } from '../src/domain/a2p.js';
import { platformRecordsSchema } from '../src/records/format.js';
import { loadedIds } from '../src/records/load-result.js';
import { loadPlatformRecords } from '../src/records/loader.js';
import {
  CASES,
  CHECK_NAMES,
  COMBINATION_CASES,
  idsOf,
  messagingPathOf,
  registrationsOf,
  servicesOf,
  TABLE,
} from './support/a2p-scenarios.js';
import {
  startFakeTwilio,
  twilioChannelRecord,
  twilioSid,
  type FakeTwilio,
  type FakeTwilioData,
} from './support/fake-twilio.js';
import {
  createTenant,
  createTestApi,
  type Schemas,
  type Tenant,
  type TestApi,
} from './support/harness.js';

const ACCOUNT_SID = twilioSid('AC', 0xa2b);
const AUTH_TOKEN = 'rule-table-auth-token-0123456789';

function fakeTwilioData(): FakeTwilioData {
  return {
    incomingNumbers: TABLE.map((_, i) => ({
      sid: idsOf(i).numberSid,
      phoneNumber: idsOf(i).phone,
    })),
    services: TABLE.flatMap((_, i) =>
      servicesOf(i).map((service) => ({
        sid: service.sid,
        numberSids: service.holdsNumber ? [idsOf(i).numberSid] : [],
      })),
    ),
    campaigns: TABLE.flatMap((_, i) =>
      registrationsOf(i).map((r) => ({
        sid: r.campaignSid,
        serviceSid: r.serviceSid,
        brandSid: r.brandSid,
        status: r.campaignStatus,
        mock: r.mock ?? false,
      })),
    ),
    brands: TABLE.flatMap((_, i) =>
      registrationsOf(i).map((r) => ({ sid: r.brandSid, status: r.brandStatus })),
    ),
  };
}

function platformRecords(twilio: FakeTwilio) {
  const numbers = TABLE.map((_, i) => idsOf(i).phone);
  return platformRecordsSchema.parse({
    channels: [
      { name: 'Records line', kind: 'telephony', provider: 'records', numbers },
      twilioChannelRecord('Twilio line', {
        accountSid: ACCOUNT_SID,
        authToken: AUTH_TOKEN,
        baseUrl: twilio.baseUrl,
        timeoutMs: 5000,
        numbers,
      }),
    ],
    messaging_services: TABLE.flatMap((_, i) =>
      servicesOf(i).map((service) => ({
        sid: service.sid,
        name: `Service ${service.sid.slice(-4)}`,
        numbers: service.holdsNumber ? [idsOf(i).phone] : [],
      })),
    ),
    a2p_brands: TABLE.flatMap((_, i) =>
      registrationsOf(i).map((r) => ({ sid: r.brandSid, status: r.brandStatus })),
    ),
    a2p_campaigns: TABLE.flatMap((_, i) =>
      registrationsOf(i).map((r) => ({
        sid: r.campaignSid,
        messaging_service: r.serviceSid,
        brand: r.brandSid,
        campaign_status: r.campaignStatus,
        is_mock: r.mock ?? false,
      })),
    ),
  });
}

describe('the A2P check against both providers', () => {
  let api: TestApi;
  let acme: Tenant;
  let twilio: FakeTwilio;
  const channelIds: Record<string, number> = {};

  beforeAll(async () => {
    api = await createTestApi();
    acme = await createTenant(api.db, 'acme');
    // Small pages, so the walk over services and numbers pages as it would on a big account.
    twilio = await startFakeTwilio({
      accountSid: ACCOUNT_SID,
      authToken: AUTH_TOKEN,
      data: fakeTwilioData(),
      maxPageSize: 3,
    });
    const { records } = await loadPlatformRecords(
      api.db,
      acme.organizationId,
      platformRecords(twilio),
    );
    const channels = loadedIds(records, 'channels');
    channelIds['records'] = channels['Records line']!;
    channelIds['twilio'] = channels['Twilio line']!;
  });

  afterAll(async () => {
    await twilio.close();
    await api.close();
  });

  async function check(provider: string, index: number) {
    const response = await api.request<Schemas['A2pMessagingPathCheckResponse']>(
      'POST',
      `/api/v1/channels/telephony/${channelIds[provider]}/numbers/verify-a2p-compliance`,
      { key: acme.key, body: { phone: idsOf(index).phone } },
    );
    expect(response.status).toBe(200);
    return response.body;
  }

  describe.each(['records', 'twilio'])('provider %s', (provider) => {
    it.each(CASES)('$name: a2p_approved is $approved', async ({ index, approved }) => {
      expect((await check(provider, index)).a2p_approved).toBe(approved);
    });
  });

  it.each([...CASES, ...COMBINATION_CASES])(
    '$name: both providers give the same checks, and the rule gives them too',
    async ({ index, approved, passed }) => {
      const fromRecords = await check('records', index);
      const fromTwilio = await check('twilio', index);
      expect(fromTwilio).toEqual(fromRecords);
      expect(fromRecords.a2p_approved).toBe(approved);
      expect(fromRecords.checks.map((c) => c.name)).toEqual(CHECK_NAMES);
      expect(fromRecords.checks.every((c) => c.passed === true)).toBe(approved);
      if (passed) expect(fromRecords.checks.map((c) => c.passed)).toEqual(passed);
      expect(checkA2p(messagingPathOf(index)).checks).toEqual(fromRecords.checks);
    },
  );

  it.each(['records', 'twilio'])(
    'provider %s: the status list gives every number the answer of its single check',
    async (provider) => {
      const response = await api.request<Schemas['A2pNumberStatusListResponse']>(
        'GET',
        `/api/v1/channels/telephony/${channelIds[provider]}/numbers/a2p-status?limit=1000`,
        { key: acme.key },
      );
      expect(response.status).toBe(200);
      const expected = await Promise.all(
        TABLE.map(async (_, index) => ({
          phone: idsOf(index).phone,
          ...(await check('records', index)),
        })),
      );
      expected.sort((a, b) => (a.phone < b.phone ? -1 : 1));
      expect(response.body.items).toEqual(expected);
    },
  );
});
