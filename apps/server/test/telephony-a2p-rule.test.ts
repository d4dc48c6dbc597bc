// The A2P decision rule (docs/decisions.md sections 5 and 11) as tables, run through the API
// (the single check and the channel's status list) against both telephony providers with the
// same expectations: `records` reads what
// `loadPlatformRecords` stored, `twilio` reads the fake Twilio over HTTP. The pure rule runs the
// same tables too. The acceptance scenarios fix `a2p_approved`; the combinations of the four
// conditions fix which check fails first; both providers must give the very same `checks`.
// Every response is checked against the spec by the harness.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { platformRecordsSchema } from '../src/records/format.js';
import { loadedIds, loadPlatformRecords } from '../src/records/loader.js';
import { checkA2p, type MessagingPath } from '../src/domain/a2p.js';
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
  /** `passed` of each check in order, where the table fixes it. */
  passed?: Array<boolean | null>;
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

/**
 * Every combination of the four conditions: the number is in a service, that service has a
 * campaign, the campaign is verified, its brand is approved. A condition that does not hold for
 * the number's own service still holds elsewhere in the account where it can (a campaign or an
 * approved brand on another service), so only the number's own path can decide. The checks run in
 * order and stop at the first that fails: the later ones are not reached (`passed: null`).
 */
const COMBINATIONS: Scenario[] = [false, true].flatMap((inService) =>
  [false, true].flatMap((hasCampaign) =>
    [false, true].flatMap((verified) =>
      [false, true].map((brandApproved): Scenario => {
        const registration: Registration = {
          campaignStatus: verified ? 'VERIFIED' : 'PENDING',
          brandStatus: brandApproved ? 'APPROVED' : 'IN_REVIEW',
        };
        const conditions = [inService, hasCampaign, verified, brandApproved];
        const firstFailure = conditions.indexOf(false);
        return {
          name: `in a service: ${inService}, campaign: ${hasCampaign}, verified: ${verified}, brand approved: ${brandApproved}`,
          service: inService ? (hasCampaign ? [registration] : []) : null,
          ...(!(inService && hasCampaign) && { otherService: [registration] }),
          approved: firstFailure === -1,
          passed: conditions.map((_, i) =>
            firstFailure === -1 || i < firstFailure ? true : i === firstFailure ? false : null,
          ),
        };
      }),
    ),
  ),
);

const TABLE = [...SCENARIOS, ...COMBINATIONS];

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
  const scenario = TABLE[index]!;
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
  const scenario = TABLE[index]!;
  return [
    ...(scenario.service ? [{ sid: ids.serviceSid, holdsNumber: true }] : []),
    ...(scenario.otherService ? [{ sid: ids.otherServiceSid, holdsNumber: false }] : []),
  ];
}

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

function messagingPathOf(index: number): MessagingPath {
  const scenario = TABLE[index]!;
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
const COMBINATION_CASES = COMBINATIONS.map((scenario, index) => ({
  ...scenario,
  index: SCENARIOS.length + index,
}));
const CHECK_NAMES = ['messaging_service', 'a2p_campaign', 'campaign_verified', 'brand_approved'];

describe('the A2P rule', () => {
  it.each(CASES)('$name: a2p_approved is $approved', ({ index, approved }) => {
    expect(checkA2p(messagingPathOf(index)).approved).toBe(approved);
  });

  it.each(COMBINATION_CASES)('$name: checks $passed', ({ index, approved, passed }) => {
    const { approved: answer, checks } = checkA2p(messagingPathOf(index));
    expect(answer).toBe(approved);
    expect(checks.map((check) => check.name)).toEqual(CHECK_NAMES);
    expect(checks.map((check) => check.passed)).toEqual(passed);
  });
});

describe('what each check says', () => {
  /** The checks of the acceptance scenario called `name`. */
  function checksOf(name: string) {
    const index = SCENARIOS.findIndex((scenario) => scenario.name === name);
    return checkA2p(messagingPathOf(index)).checks;
  }
  const ids = (name: string) => idsOf(SCENARIOS.findIndex((scenario) => scenario.name === name));

  it('names the service, campaign and brand that passed', () => {
    const name = 'verified campaign of an approved brand';
    expect(checksOf(name).map((check) => check.detail)).toEqual([
      `The number is in messaging service ${ids(name).serviceSid}.`,
      `Messaging service ${ids(name).serviceSid} has US A2P campaign ${ids(name).campaignSid(0)}.`,
      `Campaign ${ids(name).campaignSid(0)} is VERIFIED.`,
      `Brand ${ids(name).brandSid(0)} of campaign ${ids(name).campaignSid(0)} is APPROVED.`,
    ]);
  });

  it('says what to add when the number is in no service, and that the rest was not checked', () => {
    const [service, ...rest] = checksOf('number in no messaging service');
    expect(service!.detail).toBe(
      'The number is in no messaging service: add it to the sender pool of a messaging service that has a US A2P campaign.',
    );
    expect(rest.map((check) => check.detail)).toEqual(
      Array(3).fill('Not checked: the number is in no messaging service.'),
    );
  });

  it('tells a number the provider account does not hold from one in no service', () => {
    const [service] = checkA2p(null).checks;
    expect(service).toEqual({
      name: 'messaging_service',
      passed: false,
      detail:
        "The channel's provider account holds no such incoming number: correct the channel's numbers, or its provider account.",
    });
  });

  it('says to register a campaign for a service that has none', () => {
    const name = 'service with no registration';
    expect(checksOf(name)[1]!.detail).toBe(
      `Messaging service ${ids(name).serviceSid} has no US A2P campaign: register one for it, under a brand.`,
    );
  });

  it.each([
    ['pending campaign of an approved brand', 'is PENDING: the carriers are still reviewing it'],
    [
      'in-progress campaign of an approved brand',
      'is IN_PROGRESS: the carriers are still reviewing',
    ],
    ['failed campaign of an approved brand', 'is FAILED: it was rejected; correct it'],
    ['mock campaign, verified, of an approved brand', 'is a mock (test) registration'],
    [
      'statuses in another case than the provider writes them',
      'is "verified", which is not VERIFIED',
    ],
  ])('says why a campaign is not verified: %s', (name, why) => {
    const verified = checksOf(name)[2]!;
    expect(verified.passed).toBe(false);
    expect(verified.detail).toContain(`${ids(name).campaignSid(0)} ${why}`);
  });

  it.each([
    ['verified campaign of a pending brand', 'is PENDING: it is still being reviewed'],
    ['verified campaign of a brand in review', 'is IN_REVIEW: it is still being reviewed'],
    ['verified campaign of a failed brand', 'is FAILED: it was rejected; correct the brand'],
  ])("says why the verified campaign's brand is not approved: %s", (name, why) => {
    const brand = checksOf(name)[3]!;
    expect(brand.passed).toBe(false);
    expect(brand.detail).toContain(
      `brand ${ids(name).brandSid(0)} of campaign ${ids(name).campaignSid(0)} ${why}`,
    );
  });

  it('names an approved brand that sits on another campaign of the service', () => {
    const name = 'brand approved only on another registration of the same service';
    expect(checksOf(name)[3]!.detail).toContain(
      `brand ${ids(name).brandSid(1)} is APPROVED, but on campaign ${ids(name).campaignSid(1)}, which is not verified`,
    );
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
