// The A2P decision rule (docs/decisions.md section 5) as one table, run through the API
// against both telephony providers with the same expectations: `records` reads what
// `loadPlatformRecords` stored, `twilio` reads the fake Twilio over HTTP. The pure rule runs the
// same table too. Every response is checked against the spec by the harness.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { platformRecordsSchema } from '../src/db/platform-records-format.js';
import { loadedIds, loadPlatformRecords } from '../src/db/repositories/platform-records.js';
import { isA2pApproved, type MessagingPath } from '../src/domain/a2p.js';
import {
  startFakeTwilio,
  twilioChannelRecord,
  twilioSid,
  type FakeTwilio,
  type FakeTwilioData,
} from './support/fake-twilio.js';
import { createTenant, createTestApi, type Tenant, type TestApi } from './support/harness.js';

interface Registration {
  campaignStatus: string;
  brandStatus: string;
  mock?: boolean;
}

interface Scenario {
  name: string;
  /** The registrations of the service holding the number; null: the number is in no service. */
  service: Registration[] | null;
  /** Registrations of a service of the same account that does not hold the number. */
  otherService?: Registration[];
  approved: boolean;
}

const VERIFIED_APPROVED: Registration = { campaignStatus: 'VERIFIED', brandStatus: 'APPROVED' };

const SCENARIOS: Scenario[] = [
  { name: 'verified campaign of an approved brand', service: [VERIFIED_APPROVED], approved: true },
  {
    name: 'two registrations, one verified with an approved brand',
    service: [{ campaignStatus: 'FAILED', brandStatus: 'APPROVED' }, VERIFIED_APPROVED],
    approved: true,
  },
  {
    name: 'verified campaign of a pending brand',
    service: [{ campaignStatus: 'VERIFIED', brandStatus: 'PENDING' }],
    approved: false,
  },
  {
    name: 'verified campaign of a brand in review',
    service: [{ campaignStatus: 'VERIFIED', brandStatus: 'IN_REVIEW' }],
    approved: false,
  },
  {
    name: 'verified campaign of a failed brand',
    service: [{ campaignStatus: 'VERIFIED', brandStatus: 'FAILED' }],
    approved: false,
  },
  {
    name: 'pending campaign of an approved brand',
    service: [{ campaignStatus: 'PENDING', brandStatus: 'APPROVED' }],
    approved: false,
  },
  {
    name: 'in-progress campaign of an approved brand',
    service: [{ campaignStatus: 'IN_PROGRESS', brandStatus: 'APPROVED' }],
    approved: false,
  },
  {
    name: 'failed campaign of an approved brand',
    service: [{ campaignStatus: 'FAILED', brandStatus: 'APPROVED' }],
    approved: false,
  },
  {
    name: 'mock campaign, verified, of an approved brand',
    service: [{ ...VERIFIED_APPROVED, mock: true }],
    approved: false,
  },
  {
    name: 'brand approved only on another registration of the same service',
    service: [
      { campaignStatus: 'VERIFIED', brandStatus: 'PENDING' },
      { campaignStatus: 'PENDING', brandStatus: 'APPROVED' },
    ],
    approved: false,
  },
  {
    name: "brand approved only on another service's registration",
    service: [{ campaignStatus: 'VERIFIED', brandStatus: 'PENDING' }],
    otherService: [VERIFIED_APPROVED],
    approved: false,
  },
  {
    name: 'number in no messaging service',
    service: null,
    otherService: [VERIFIED_APPROVED],
    approved: false,
  },
  { name: 'service with no registration', service: [], approved: false },
  {
    name: 'statuses in another case than the provider writes them',
    service: [{ campaignStatus: 'verified', brandStatus: 'approved' }],
    approved: false,
  },
];

/** Each scenario has its own number, services, campaigns and brands, all in one account. */
function idsOf(index: number) {
  const n = index + 1;
  return {
    phone: `+1415555${String(1000 + n)}`,
    numberSid: twilioSid('PN', n),
    serviceSid: twilioSid('MG', n),
    otherServiceSid: twilioSid('MG', 1000 + n),
    campaignSid: (k: number) => twilioSid('QE', n * 100 + k),
    brandSid: (k: number) => twilioSid('BN', n * 100 + k),
  };
}

/** Registrations of one service as (campaign, brand) pairs with their sids. */
function registrationsOf(index: number) {
  const ids = idsOf(index);
  const scenario = SCENARIOS[index]!;
  const pairs = (serviceSid: string, registrations: Registration[], offset: number) =>
    registrations.map((registration, k) => ({
      ...registration,
      serviceSid,
      campaignSid: ids.campaignSid(offset + k),
      brandSid: ids.brandSid(offset + k),
    }));
  return [
    ...pairs(ids.serviceSid, scenario.service ?? [], 0),
    ...pairs(ids.otherServiceSid, scenario.otherService ?? [], 50),
  ];
}

function servicesOf(index: number): Array<{ sid: string; holdsNumber: boolean }> {
  const ids = idsOf(index);
  const scenario = SCENARIOS[index]!;
  return [
    ...(scenario.service ? [{ sid: ids.serviceSid, holdsNumber: true }] : []),
    ...(scenario.otherService ? [{ sid: ids.otherServiceSid, holdsNumber: false }] : []),
  ];
}

const ACCOUNT_SID = twilioSid('AC', 0xa2b);
const AUTH_TOKEN = 'rule-table-auth-token-0123456789';

function fakeTwilioData(): FakeTwilioData {
  return {
    incomingNumbers: SCENARIOS.map((_, i) => ({
      sid: idsOf(i).numberSid,
      phoneNumber: idsOf(i).phone,
    })),
    services: SCENARIOS.flatMap((_, i) =>
      servicesOf(i).map((service) => ({
        sid: service.sid,
        numberSids: service.holdsNumber ? [idsOf(i).numberSid] : [],
      })),
    ),
    campaigns: SCENARIOS.flatMap((_, i) =>
      registrationsOf(i).map((r) => ({
        sid: r.campaignSid,
        serviceSid: r.serviceSid,
        brandSid: r.brandSid,
        status: r.campaignStatus,
        mock: r.mock ?? false,
      })),
    ),
    brands: SCENARIOS.flatMap((_, i) =>
      registrationsOf(i).map((r) => ({ sid: r.brandSid, status: r.brandStatus })),
    ),
  };
}

function platformRecords(twilio: FakeTwilio) {
  const numbers = SCENARIOS.map((_, i) => idsOf(i).phone);
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
    messaging_services: SCENARIOS.flatMap((_, i) =>
      servicesOf(i).map((service) => ({
        sid: service.sid,
        name: `Service ${service.sid.slice(-4)}`,
        numbers: service.holdsNumber ? [idsOf(i).phone] : [],
      })),
    ),
    a2p_brands: SCENARIOS.flatMap((_, i) =>
      registrationsOf(i).map((r) => ({ sid: r.brandSid, status: r.brandStatus })),
    ),
    a2p_campaigns: SCENARIOS.flatMap((_, i) =>
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

function messagingPathOf(index: number): MessagingPath {
  const scenario = SCENARIOS[index]!;
  if (scenario.service === null) return { messagingService: null };
  const ids = idsOf(index);
  return {
    messagingService: {
      sid: ids.serviceSid,
      campaigns: registrationsOf(index)
        .filter((r) => r.serviceSid === ids.serviceSid)
        .map((r) => ({
          sid: r.campaignSid,
          status: r.campaignStatus,
          mock: r.mock ?? false,
          brand: { sid: r.brandSid, status: r.brandStatus },
        })),
    },
  };
}

const CASES = SCENARIOS.map((scenario, index) => ({ ...scenario, index }));

describe('the A2P rule', () => {
  it.each(CASES)('$name: a2p_approved is $approved', ({ index, approved }) => {
    expect(isA2pApproved(messagingPathOf(index))).toBe(approved);
  });
});

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

  describe.each(['records', 'twilio'])('provider %s', (provider) => {
    it.each(CASES)('$name: a2p_approved is $approved', async ({ index, approved }) => {
      const response = await api.request(
        'POST',
        `/api/v1/channels/telephony/${channelIds[provider]}/numbers/verify-a2p-compliance`,
        { key: acme.key, body: { phone: idsOf(index).phone } },
      );
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ a2p_approved: approved });
    });
  });
});
