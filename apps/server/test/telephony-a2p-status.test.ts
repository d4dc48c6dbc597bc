// GET /api/v1/channels/telephony/{channel_id}/numbers/a2p-status: every incoming number of a
// channel with its A2P check, paged like every list. On a twilio channel a page costs a fixed
// number of requests to the provider (the fake counts them), and a provider that fails or times
// out anywhere in the page makes the whole page a 502. Every response is checked against the spec.

import { createClient } from '@agentline/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { platformRecordsSchema } from '../src/records/format.js';
import { loadedIds } from '../src/records/load-result.js';
import { loadPlatformRecords } from '../src/records/loader.js';
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
import { startLiveServer } from './support/live-server.js';

const ACCOUNT_SID = twilioSid('AC', 0xa2b5);
const AUTH_TOKEN = 'status-list-auth-token-0123456789';
// Long enough that a busy machine never times out a fake Twilio that answers at once (300 ms did,
// under three test suites at a time); the timeout test delays its answer well past it.
const TIMEOUT_MS = 2_000;

/**
 * The channel's 100 numbers, in phone order. Numbers 0-11 of every twenty are in service 1 (a
 * verified campaign of an approved brand), 12-16 in service 2 (a pending campaign), 17-18 in
 * service 3 (no campaign), 19 in none; of those, the ones below 60 are in the account and the
 * others only on the channel. Services 4 and 5 hold none of them.
 */
const PHONES = Array.from({ length: 100 }, (_, i) => `+1415555${3000 + i}`);
const serviceIndexOf = (i: number) => {
  const k = i % 20;
  return k < 12 ? 1 : k < 17 ? 2 : k < 19 ? 3 : null;
};
const isHeld = (i: number) => serviceIndexOf(i) !== null || i < 60;
const numberSid = (i: number) => twilioSid('PN', 3000 + i);
const serviceSid = (n: number) => twilioSid('MG', 0x500 + n);
const APPROVED_BRAND = twilioSid('BN', 0x501);
const PENDING_BRAND = twilioSid('BN', 0x502);

function accountData(): FakeTwilioData {
  const held = PHONES.flatMap((phoneNumber, i) =>
    isHeld(i) ? [{ sid: numberSid(i), phoneNumber }] : [],
  );
  // The account also has numbers that are on no channel, in a service of their own.
  const others = Array.from({ length: 40 }, (_, i) => ({
    sid: twilioSid('PN', 9000 + i),
    phoneNumber: `+1212555${1000 + i}`,
  }));
  return {
    incomingNumbers: [...held, ...others],
    services: [1, 2, 3, 4, 5].map((n) => ({
      sid: serviceSid(n),
      numberSids:
        n === 4
          ? others.map((number) => number.sid)
          : PHONES.flatMap((_, i) => (serviceIndexOf(i) === n ? [numberSid(i)] : [])),
    })),
    campaigns: [
      {
        sid: twilioSid('QE', 0x501),
        serviceSid: serviceSid(1),
        brandSid: APPROVED_BRAND,
        status: 'VERIFIED',
      },
      {
        sid: twilioSid('QE', 0x502),
        serviceSid: serviceSid(2),
        brandSid: PENDING_BRAND,
        status: 'PENDING',
      },
      {
        sid: twilioSid('QE', 0x504),
        serviceSid: serviceSid(4),
        brandSid: APPROVED_BRAND,
        status: 'VERIFIED',
      },
    ],
    brands: [
      { sid: APPROVED_BRAND, status: 'APPROVED' },
      { sid: PENDING_BRAND, status: 'PENDING' },
    ],
  };
}

/** The passed of each check that the account gives number `i`. */
function expectedPassed(i: number): Array<boolean | null> {
  switch (serviceIndexOf(i)) {
    case 1:
      return [true, true, true, true];
    case 2:
      return [true, true, false, null];
    case 3:
      return [true, false, null, null];
    default:
      return [false, null, null, null];
  }
}

let api: TestApi;
let acme: Tenant;
let globex: Tenant;
let twilio: FakeTwilio;
const channelIds: Record<string, number> = {};
let globexLineId: number;

const statusUrl = (channelId: number | string, query = '') =>
  `/api/v1/channels/telephony/${channelId}/numbers/a2p-status${query}`;

async function statusPage(channel: string, query = '', key = acme.key) {
  return api.request<Schemas['A2pNumberStatusListResponse']>(
    'GET',
    statusUrl(channelIds[channel]!, query),
    { key },
  );
}

beforeAll(async () => {
  api = await createTestApi();
  acme = await createTenant(api.db, 'acme');
  globex = await createTenant(api.db, 'globex');
  twilio = await startFakeTwilio({
    accountSid: ACCOUNT_SID,
    authToken: AUTH_TOKEN,
    data: accountData(),
  });
  const { records } = await loadPlatformRecords(
    api.db,
    acme.organizationId,
    platformRecordsSchema.parse({
      channels: [
        twilioChannelRecord('Twilio line', {
          accountSid: ACCOUNT_SID,
          authToken: AUTH_TOKEN,
          baseUrl: twilio.baseUrl,
          timeoutMs: TIMEOUT_MS,
          // Loaded out of order: the list gives them in phone order.
          numbers: [...PHONES].reverse(),
        }),
        {
          name: 'Records line',
          kind: 'telephony',
          provider: 'records',
          numbers: ['+14155550102', '+14155550100', '+14155550101'],
        },
        { name: 'Empty line', kind: 'telephony', provider: 'records' },
        { name: 'Chat', kind: 'web_chat' },
      ],
      messaging_services: [
        { sid: 'MG-acme', name: 'SMS', numbers: ['+14155550100', '+14155550101'] },
      ],
      a2p_brands: [{ sid: 'BN-acme', status: 'APPROVED' }],
      a2p_campaigns: [
        {
          sid: 'QE-acme',
          messaging_service: 'MG-acme',
          brand: 'BN-acme',
          campaign_status: 'VERIFIED',
        },
      ],
    }),
  );
  Object.assign(channelIds, loadedIds(records, 'channels'));
  const globexLoad = await loadPlatformRecords(
    api.db,
    globex.organizationId,
    platformRecordsSchema.parse({
      channels: [{ name: 'Globex line', kind: 'telephony', numbers: ['+14155550100'] }],
    }),
  );
  globexLineId = loadedIds(globexLoad.records, 'channels')['Globex line']!;
});

afterAll(async () => {
  await twilio.close();
  await api.close();
});

beforeEach(() => {
  Object.assign(twilio.data, accountData());
  Object.assign(twilio.behaviour, {
    maxPageSize: 1000,
    delayMs: 0,
    delayPath: null,
    failure: null,
  });
  twilio.requests.length = 0;
});

describe('a records channel', () => {
  it('lists every incoming number in phone order with the check of each', async () => {
    const { status, body } = await statusPage('Records line');
    expect(status).toBe(200);
    expect(body).toMatchObject({
      page: 0,
      page_size: 25,
      total_count: 3,
      total_pages: 1,
      next_cursor: null,
    });
    expect(body.items.map((item) => [item.phone, item.a2p_approved])).toEqual([
      ['+14155550100', true],
      ['+14155550101', true],
      ['+14155550102', false],
    ]);
    expect(body.items[2]!.checks.map((check) => check.passed)).toEqual([false, null, null, null]);
  });

  it('pages by page and limit, and walks by cursor to the same items', async () => {
    const all = (await statusPage('Records line')).body.items;
    const second = await statusPage('Records line', '?page=1&limit=2');
    expect(second.body).toMatchObject({ page: 1, page_size: 2, total_count: 3, total_pages: 2 });
    expect(second.body.items).toEqual(all.slice(2));

    const walked = [];
    let page = (await statusPage('Records line', '?limit=1')).body;
    for (;;) {
      walked.push(...page.items);
      if (!page.next_cursor) break;
      const cursor = encodeURIComponent(page.next_cursor);
      page = (await statusPage('Records line', `?limit=1&cursor=${cursor}`)).body;
    }
    expect(walked).toEqual(all);
  });

  it('gives counts only for limit 0, and an empty channel an empty page', async () => {
    const counts = await statusPage('Records line', '?limit=0');
    expect(counts.body).toMatchObject({ items: [], total_count: 3, total_pages: null });
    const empty = await statusPage('Empty line');
    expect(empty.body).toMatchObject({ items: [], total_count: 0, next_cursor: null });
  });

  it("refuses a cursor of another channel's list (422)", async () => {
    const first = await statusPage('Records line', '?limit=1');
    const cursor = encodeURIComponent(first.body.next_cursor!);
    const response = await api.request<Schemas['HTTPValidationError']>(
      'GET',
      statusUrl(channelIds['Twilio line']!, `?limit=1&cursor=${cursor}`),
      { key: acme.key },
    );
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([
      expect.objectContaining({ loc: ['query', 'cursor'], type: 'value_error' }),
    ]);
    expect(twilio.requests).toEqual([]);
  });

  it.each([
    ['limit', '?limit=1001', ['query', 'limit'], 'less_than_equal'],
    ['page', '?page=-1', ['query', 'page'], 'greater_than_equal'],
    ['cursor', '?cursor=abc', ['query', 'cursor'], 'value_error'],
  ])('a bad %s is a 422 that names it', async (_, query, loc, type) => {
    const response = await api.request<Schemas['HTTPValidationError']>(
      'GET',
      statusUrl(channelIds['Records line']!, query),
      { key: acme.key },
    );
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([expect.objectContaining({ loc, type })]);
  });
});

describe('which channel', () => {
  async function notFound(channelId: number | string) {
    const response = await api.request<Schemas['ErrorResponse']>('GET', statusUrl(channelId), {
      key: acme.key,
    });
    expect(response.status).toBe(404);
    expect(response.body.code).toBe('NOT_FOUND');
    return response.body.detail;
  }

  it("answers another organization's channel exactly like one that does not exist", async () => {
    const foreign = await notFound(globexLineId);
    const unknown = await notFound(999_999);
    expect(foreign.replace(String(globexLineId), 'N')).toBe(unknown.replace('999999', 'N'));
  });

  it('a channel that is not a telephony channel is a 404', async () => {
    expect(await notFound(channelIds['Chat']!)).toContain('No telephony channel');
  });
});

describe('a twilio channel of 100 numbers', () => {
  // One page of 100: the services list, the phone numbers of each of the 5 services, the
  // campaigns of the 3 that hold a number of the page, the brands, and the account's incoming
  // numbers (5 numbers are in no service): 1 + 5 + 3 + 1 + 1.
  const REQUESTS_PER_PAGE = 11;

  it(`answers a page of 100 numbers with ${REQUESTS_PER_PAGE} requests to Twilio`, async () => {
    const { status, body } = await statusPage('Twilio line', '?limit=100');
    expect(status).toBe(200);
    expect(body.total_count).toBe(100);
    expect(body.items.map((item) => item.phone)).toEqual(PHONES);
    expect(body.items.map((item) => item.checks.map((check) => check.passed))).toEqual(
      PHONES.map((_, i) => expectedPassed(i)),
    );
    expect(twilio.requests).toHaveLength(REQUESTS_PER_PAGE);
    expect(twilio.requests.filter((r) => r.includes('/Compliance/Usa2p'))).toHaveLength(3);
    // Details name services, campaigns and brands, never the account or its token.
    expect(JSON.stringify(body)).not.toContain(ACCOUNT_SID);
    expect(JSON.stringify(body)).not.toContain(AUTH_TOKEN);
  });

  it('costs no more for 100 numbers than for 10, and nothing for counts only', async () => {
    await statusPage('Twilio line', '?limit=10');
    const forTen = twilio.requests.length;
    twilio.requests.length = 0;
    await statusPage('Twilio line', '?limit=100');
    expect(twilio.requests.length).toBeLessThanOrEqual(REQUESTS_PER_PAGE);
    expect(forTen).toBeLessThanOrEqual(twilio.requests.length);

    twilio.requests.length = 0;
    expect((await statusPage('Twilio line', '?limit=0')).body.total_count).toBe(100);
    expect(twilio.requests).toEqual([]);
  });

  it('gives each number what its single check gives, and tells the numbers the account lacks', async () => {
    const { body } = await statusPage('Twilio line', '?limit=100');
    twilio.requests.length = 0;
    for (const [i, item] of body.items.entries()) {
      const single = await api.request<Schemas['A2pMessagingPathCheckResponse']>(
        'POST',
        `/api/v1/channels/telephony/${channelIds['Twilio line']}/numbers/verify-a2p-compliance`,
        { key: acme.key, body: { phone: item.phone } },
      );
      if (isHeld(i)) {
        expect(single.body).toEqual({ a2p_approved: item.a2p_approved, checks: item.checks });
      } else {
        expect(single.status).toBe(404);
        expect(item.checks[0]!.detail).toContain('provider account holds no such incoming number');
      }
    }
    // What the page replaces: at least four reads for each number in a service (the account's
    // number, the services, the service's numbers, its campaigns), against 11 for the page.
    const inAService = PHONES.filter((_, i) => serviceIndexOf(i) !== null).length;
    expect(twilio.requests.length).toBeGreaterThanOrEqual(4 * inAService);
    const inNoService = body.items.find((_, i) => serviceIndexOf(i) === null && isHeld(i))!;
    expect(inNoService.checks[0]!.detail).toContain('is in no messaging service');
  });

  it('pages through Twilio lists as Twilio pages them, at a cost per page that stays fixed', async () => {
    twilio.behaviour.maxPageSize = 20;
    const { body } = await statusPage('Twilio line', '?limit=100');
    expect(body.items.map((item) => item.checks.map((check) => check.passed))).toEqual(
      PHONES.map((_, i) => expectedPassed(i)),
    );
    // Service 1's 60 numbers and the account's 135 incoming numbers take several pages each.
    expect(twilio.requests.some((r) => r.includes('PageToken'))).toBe(true);
    expect(twilio.requests.length).toBeLessThan(PHONES.length);
  });
});

describe('a provider failure is a 502 for the whole page', () => {
  it('a timeout mid-page, after the services were read', async () => {
    Object.assign(twilio.behaviour, { delayMs: 5000, delayPath: /\/Compliance\/Usa2p$/ });
    const started = performance.now();
    const response = await api.request<Schemas['ErrorResponse']>(
      'GET',
      statusUrl(channelIds['Twilio line']!, '?limit=100'),
      { key: acme.key },
    );
    expect(response.status).toBe(502);
    expect(response.body.code).toBe('PROVIDER_UNAVAILABLE');
    expect(response.body.detail).toContain(`did not answer within ${TIMEOUT_MS} ms`);
    // Within one timeout of its own, not the provider's 5 s nor two timeouts one after the
    // other; the rest is the page's other reads on a machine shared with the whole suite (a CI
    // run took 2,952 ms).
    expect(performance.now() - started).toBeLessThan(TIMEOUT_MS * 2 - 500);
    expect(twilio.requests.filter((r) => r.startsWith('/v1/Services?'))).toHaveLength(1);
  });

  it.each([
    ['the brands', /\/v1\/a2p\/BrandRegistrations$/],
    ['the incoming numbers', /IncomingPhoneNumbers\.json$/],
    ['the phone numbers of a service', /PhoneNumbers$/],
  ])('a failure on %s', async (_, path) => {
    twilio.behaviour.failure = { status: 503, path };
    const response = await api.request<Schemas['ErrorResponse']>(
      'GET',
      statusUrl(channelIds['Twilio line']!, '?limit=100'),
      { key: acme.key },
    );
    expect(response.status).toBe(502);
    expect(response.body.detail).toContain('the provider failed (HTTP 503)');
    expect(response.body.detail).not.toContain(ACCOUNT_SID);
  });
});

describe('through the SDK over HTTP', () => {
  it('lists a page and iterates every number', async () => {
    const server = await startLiveServer(api.app);
    try {
      const client = createClient({ apiKey: acme.key, baseUrl: server.baseUrl });
      const page = await client.telephony.a2pStatus(channelIds['Records line']!, { limit: 2 });
      expect(page.items.map((item) => item.phone)).toEqual(['+14155550100', '+14155550101']);
      const phones = [];
      for await (const item of client.telephony.iterateA2pStatus(channelIds['Twilio line']!, {
        limit: 30,
      })) {
        phones.push(item.phone);
      }
      expect(phones).toEqual(PHONES);
    } finally {
      await server.close();
    }
  });
});
