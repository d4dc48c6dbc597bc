// The twilio provider against the fake Twilio: pagination, timeouts, refused credentials,
// provider failures, and that no credential reaches a log line or a response. The app logs into
// an array here, and every response is checked against the spec.

import { sql } from 'drizzle-orm';
import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../src/app.js';
import type { Db } from '../src/db/engine/client.js';
import { platformRecordsSchema } from '../src/records/format.js';
import { loadedIds } from '../src/records/load-result.js';
import { loadPlatformRecords } from '../src/records/loader.js';
import { channels } from '../src/db/schema/sqlite.js';
import { expectResponseMatchesSpec } from './support/contract.js';
import {
  startFakeTwilio,
  twilioChannelRecord,
  twilioSid,
  type FakeTwilio,
  type FakeTwilioData,
} from './support/fake-twilio.js';
import { createTenant, type Schemas, type Tenant } from './support/harness.js';
import { createTestDb, queryTestDb } from './support/test-database.js';

const ACCOUNT_SID = twilioSid('AC', 0x7e57);
const AUTH_TOKEN = 'twilio-test-auth-token-c0ffee0123456789';
const WRONG_AUTH_TOKEN = 'wrong-auth-token-0123456789abcdef';
// Each provider request's timeout. The pages are followed two numbers at a time, each request
// under this bound: at 300 ms a first request on a machine busy with other suites' servers
// missed it (a CI run's Node.js 24 lane), and the check answered 502 where it should have read.
const TIMEOUT_MS = 2_000;

// Numbers that contain the checked number's digits, so Twilio's partial PhoneNumber filter
// returns them too and the exact one is on page 3 at two a page.
const PHONE = '+14155550100';
const LOOKALIKES = ['+141555501001', '+141555501002', '+141555501003', '+141555501004'];
const otherNumber = (n: number) => ({
  sid: twilioSid('PN', n),
  phoneNumber: `+1415555${2000 + n}`,
});
const SERVICE_SID = twilioSid('MG', 6);
const BRAND_SID = twilioSid('BN', 1);

/** Seven services; the sixth (page 3 at two a page) holds PHONE as the last of its six numbers. */
function accountData(): FakeTwilioData {
  const target = { sid: twilioSid('PN', 100), phoneNumber: PHONE };
  const others = [1, 2, 3, 4, 5].map(otherNumber);
  return {
    incomingNumbers: [
      ...LOOKALIKES.map((phoneNumber, i) => ({ sid: twilioSid('PN', 200 + i), phoneNumber })),
      target,
      ...others,
    ],
    services: [1, 2, 3, 4, 5, 6, 7].map((n) => ({
      sid: twilioSid('MG', n),
      numberSids: n === 6 ? [...others.map((o) => o.sid), target.sid] : [],
    })),
    campaigns: [
      { sid: twilioSid('QE', 1), serviceSid: SERVICE_SID, brandSid: BRAND_SID, status: 'FAILED' },
      { sid: twilioSid('QE', 2), serviceSid: SERVICE_SID, brandSid: BRAND_SID, status: 'PENDING' },
      { sid: twilioSid('QE', 3), serviceSid: SERVICE_SID, brandSid: BRAND_SID, status: 'VERIFIED' },
    ],
    brands: [{ sid: BRAND_SID, status: 'APPROVED' }],
  };
}

let db: Db;
let app: App;
let acme: Tenant;
let twilio: FakeTwilio;
const logLines: string[] = [];
const responseTexts: string[] = [];
const channelIds: Record<string, number> = {};

function twilioChannel(name: string, baseUrl: string, authToken = AUTH_TOKEN) {
  return twilioChannelRecord(name, {
    accountSid: ACCOUNT_SID,
    authToken,
    baseUrl,
    timeoutMs: TIMEOUT_MS,
    numbers: [PHONE, '+14155559999'],
  });
}

/** Checks `phone` on `channel`; `T` is the body expected, as for `TestApi.request`. */
async function check<T>(channel: string, phone = PHONE) {
  const url = `/api/v1/channels/telephony/${channelIds[channel]}/numbers/verify-a2p-compliance`;
  const started = performance.now();
  const response = await app.request(url, {
    method: 'POST',
    headers: { 'Service-API-Key': acme.key, 'Content-Type': 'application/json' },
    body: JSON.stringify({ phone }),
  });
  const elapsedMs = performance.now() - started;
  await expectResponseMatchesSpec('POST', url, response);
  const text = await response.text();
  responseTexts.push(text);
  return { status: response.status, body: JSON.parse(text) as T, elapsedMs };
}

beforeAll(async () => {
  db = await createTestDb();
  const logger = pino({ level: 'debug' }, { write: (line: string) => void logLines.push(line) });
  app = createApp({ db, logger });
  acme = await createTenant(db, 'acme');
  twilio = await startFakeTwilio({
    accountSid: ACCOUNT_SID,
    authToken: AUTH_TOKEN,
    data: accountData(),
  });
  // A port nothing listens on: a fake started and closed again.
  const closed = await startFakeTwilio({
    accountSid: ACCOUNT_SID,
    authToken: AUTH_TOKEN,
    data: accountData(),
  });
  const unreachableUrl = closed.baseUrl;
  await closed.close();

  const { records } = await loadPlatformRecords(
    db,
    acme.organizationId,
    platformRecordsSchema.parse({
      channels: [
        twilioChannel('live', twilio.baseUrl),
        twilioChannel('wrong token', twilio.baseUrl, WRONG_AUTH_TOKEN),
        twilioChannel('unreachable', unreachableUrl),
        twilioChannel('no token', twilio.baseUrl),
      ],
    }),
  );
  Object.assign(channelIds, loadedIds(records, 'channels'));
  await queryTestDb(
    db,
    sql`UPDATE ${channels} SET provider_secret = NULL WHERE id = ${channelIds['no token']!}`,
  );
});

afterAll(async () => {
  await twilio.close();
  await db.close();
});

beforeEach(() => {
  Object.assign(twilio.data, accountData());
  Object.assign(twilio.behaviour, { maxPageSize: 2, delayMs: 0, delayPath: null, failure: null });
  twilio.requests.length = 0;
});

describe('pagination', () => {
  it('follows every kind of page link to a number in a service on page 3', async () => {
    const { status, body } = await check('live');
    expect(status).toBe(200);
    expect(body).toMatchObject({ a2p_approved: true });

    const pagesOf = (path: RegExp) =>
      twilio.requests
        .filter((r) => path.test(r))
        .map((r) => new URL(r, 'http://x').searchParams.get('Page') ?? '0');
    // Incoming numbers: the exact number is the fifth match, on page 3.
    expect(pagesOf(/IncomingPhoneNumbers\.json/)).toEqual(['0', '1', '2']);
    // Services: the sixth holds the number; the seventh (page 4) is never read.
    expect(pagesOf(/^\/v1\/Services\?/)).toEqual(['0', '1', '2']);
    // The holding service's numbers: the sixth, on page 3.
    expect(pagesOf(new RegExp(`/v1/Services/${SERVICE_SID}/PhoneNumbers`))).toEqual([
      '0',
      '1',
      '2',
    ]);
    // The verified campaign is the third, on page 2.
    expect(pagesOf(/Compliance\/Usa2p/)).toEqual(['0', '1']);
    // The account's one brand, on one page.
    expect(pagesOf(/\/v1\/a2p\/BrandRegistrations/)).toEqual(['0']);
  });

  it("asks for Twilio's largest page, so a small account takes one page per list", async () => {
    twilio.behaviour.maxPageSize = 1000;
    expect((await check('live')).body).toMatchObject({ a2p_approved: true });
    expect(twilio.requests[0]).toMatch(/[?&]PageSize=1000(&|$)/);
    expect(twilio.requests.filter((r) => r.includes('PageToken'))).toEqual([]);
  });

  it('answers false when the campaign on a later page is verified but its brand is not approved', async () => {
    twilio.data.brands = [{ sid: BRAND_SID, status: 'PENDING' }];
    const { body } = await check<Schemas['A2pMessagingPathCheckResponse']>('live');
    expect(body.a2p_approved).toBe(false);
    expect(body.checks.map((c) => c.passed)).toEqual([true, true, true, false]);
    expect(body.checks[3]!.detail).toContain(`brand ${BRAND_SID} of campaign`);
  });

  it('answers 404 for a number of the channel that the Twilio account does not hold', async () => {
    const { status, body } = await check<Schemas['ErrorResponse']>('live', '+14155559999');
    expect(status).toBe(404);
    expect(body.code).toBe('NOT_FOUND');
    expect(body.detail).toContain('holds no incoming number +14155559999');
  });
});

describe('provider failures are 502s, never false', () => {
  it('a provider slower than the timeout is a 502 within the timeout', async () => {
    twilio.behaviour.delayMs = 5000;
    const { status, body, elapsedMs } = await check<Schemas['ErrorResponse']>('live');
    expect(status).toBe(502);
    expect(body.code).toBe('PROVIDER_UNAVAILABLE');
    expect(body.detail).toContain(`the provider did not answer within ${TIMEOUT_MS} ms`);
    // Within its own timeout, well before the provider's 5 s answer.
    expect(elapsedMs).toBeLessThan(TIMEOUT_MS + 1_500);
  });

  it('refused credentials are a 502 that says so', async () => {
    const { status, body } = await check<Schemas['ErrorResponse']>('wrong token');
    expect(status).toBe(502);
    expect(body.detail).toContain("the provider refused the channel's credentials (HTTP 401)");
  });

  it.each([
    ['a 403', { status: 403 }, "the provider refused the channel's credentials (HTTP 403)"],
    ['a 500', { status: 500 }, 'the provider failed (HTTP 500)'],
    ['a 503', { status: 503 }, 'the provider failed (HTTP 503)'],
    [
      'a 503 on the last read (the brand)',
      { status: 503, path: /BrandRegistrations/ },
      'the provider failed (HTTP 503)',
    ],
    ['rate limiting', { status: 429 }, 'the provider is limiting the rate of requests (HTTP 429)'],
  ])('%s from the provider is a 502 that names it', async (_, failure, problem) => {
    twilio.behaviour.failure = failure;
    const { status, body } = await check<Schemas['ErrorResponse']>('live');
    expect(status).toBe(502);
    expect(body.code).toBe('PROVIDER_UNAVAILABLE');
    expect(body.detail).toContain(problem);
  });

  it('a provider that cannot be reached is a 502', async () => {
    const { status, body } = await check<Schemas['ErrorResponse']>('unreachable');
    expect(status).toBe(502);
    expect(body.detail).toContain('the provider could not be reached');
  });

  it('a twilio channel without an auth token is a 502 that tells the operator', async () => {
    const { status, body } = await check<Schemas['ErrorResponse']>('no token');
    expect(status).toBe(502);
    expect(body.detail).toContain('no twilio auth token');
    expect(twilio.requests).toEqual([]);
  });
});

describe('credentials', () => {
  const basicAuth = Buffer.from(`${ACCOUNT_SID}:${AUTH_TOKEN}`).toString('base64');

  // Runs last: it reads what every request above logged and answered.
  it('appear in no log line and no response body', () => {
    expect(logLines.length).toBeGreaterThan(0);
    expect(logLines.some((line) => line.includes('telephony provider unavailable'))).toBe(true);
    for (const text of [...logLines, ...responseTexts]) {
      expect(text).not.toContain(AUTH_TOKEN);
      expect(text).not.toContain(WRONG_AUTH_TOKEN);
      expect(text).not.toContain(ACCOUNT_SID);
      expect(text).not.toContain(basicAuth);
    }
  });
});
