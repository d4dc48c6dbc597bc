// A fake Twilio REST API on 127.0.0.1 (an ephemeral port) that speaks the real wire format of the
// five lists the A2P check reads: field names and values, the two paging envelopes (v2010
// `next_page_uri` at the top, v1 `meta.next_page_url`), Basic authentication and Twilio's error
// body `{code, message, more_info, status}`. One server stands in for both api.twilio.com and
// messaging.twilio.com; their paths do not overlap. Tests change `behaviour` and `data` freely
// between requests to make it slow, fail or page, and count what it was asked (`requests`).
//
// Wire facts followed here (twilio/twilio-oai spec, twilio-go docs, twilio.com docs):
//   GET /2010-04-01/Accounts/{AccountSid}/IncomingPhoneNumbers.json?PhoneNumber=&PageSize=&Page=
//     -> {incoming_phone_numbers, first_page_uri, next_page_uri, previous_page_uri, uri, page,
//         page_size, start, end}; links are paths relative to the host; PhoneNumber matches
//         partial numbers, `*` standing for any digit.
//   GET /v1/Services, /v1/Services/{ServiceSid}/PhoneNumbers, /v1/Services/{ServiceSid}/Compliance/Usa2p
//     -> {services | phone_numbers | compliance, meta: {page, page_size, first_page_url,
//         previous_page_url, url, next_page_url, key}}; links are absolute URLs.
//   GET /v1/a2p/BrandRegistrations -> {data, meta: {..., key: "data"}}: the account's brand
//     registrations (`status`, `mock`, ...).
//   Page size: default 50, at most 1000.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A Twilio-shaped SID: two letters and 32 hex digits, e.g. twilioSid('MG', 1). */
export function twilioSid(prefix: string, n: number): string {
  return prefix + n.toString(16).padStart(32, '0');
}

export interface FakeIncomingNumber {
  sid: string;
  phoneNumber: string;
}

export interface FakeMessagingService {
  sid: string;
  /** PN sids of the account's incoming numbers that are in this service. */
  numberSids: string[];
}

export interface FakeCampaign {
  sid: string;
  serviceSid: string;
  brandSid: string;
  /** `campaign_status`: VERIFIED, PENDING, IN_PROGRESS, FAILED, ... */
  status: string;
  mock?: boolean;
}

export interface FakeBrand {
  sid: string;
  /** `status`: APPROVED, PENDING, IN_REVIEW, FAILED, DELETED. */
  status: string;
  mock?: boolean;
}

export interface FakeTwilioData {
  incomingNumbers: FakeIncomingNumber[];
  services: FakeMessagingService[];
  campaigns: FakeCampaign[];
  brands: FakeBrand[];
}

export interface FakeTwilioBehaviour {
  /** The most items on one page, whatever `PageSize` asks for. */
  maxPageSize: number;
  /** How long to wait before answering each request (only on paths matching `delayPath`, if given). */
  delayMs: number;
  delayPath: RegExp | null;
  /** Answer with this error status instead (only on paths matching `path`, if given). */
  failure: { status: number; path?: RegExp } | null;
}

export interface FakeTwilio {
  baseUrl: string;
  accountSid: string;
  authToken: string;
  data: FakeTwilioData;
  behaviour: FakeTwilioBehaviour;
  /** Path and query of every request received, in order. */
  requests: string[];
  close(): Promise<void>;
}

export interface FakeTwilioOptions extends Partial<FakeTwilioBehaviour> {
  accountSid: string;
  authToken: string;
  data: FakeTwilioData;
}

const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 1000;
const CREATED_RFC2822 = 'Thu, 30 Jul 2015 20:12:31 +0000';
const CREATED_ISO = '2015-07-30T20:12:31Z';

const ERROR_TEXT: Record<number, { code: number; message: string }> = {
  400: { code: 20001, message: 'Bad Request' },
  401: { code: 20003, message: 'Authenticate' },
  403: { code: 20403, message: 'Forbidden' },
  404: { code: 20404, message: 'The requested resource was not found' },
  405: { code: 20004, message: 'Method not allowed' },
  429: { code: 20429, message: 'Too Many Requests' },
  500: { code: 20500, message: 'Internal Server Error' },
  503: { code: 20503, message: 'Service Unavailable' },
};

function errorBody(status: number, message?: string) {
  const known = ERROR_TEXT[status] ?? { code: 20500, message: 'Internal Server Error' };
  return {
    code: known.code,
    message: message ?? known.message,
    more_info: `https://www.twilio.com/docs/errors/${known.code}`,
    status,
  };
}

interface Page<T> {
  items: T[];
  page: number;
  pageSize: number;
  hasNext: boolean;
}

function pageOf<T>(all: readonly T[], query: URLSearchParams, maxPageSize: number): Page<T> {
  const requested = Number(query.get('PageSize') ?? DEFAULT_PAGE_SIZE);
  const pageSize = Math.max(1, Math.min(requested, MAX_PAGE_SIZE, maxPageSize));
  const page = Number(query.get('Page') ?? 0);
  const start = page * pageSize;
  return {
    items: all.slice(start, start + pageSize),
    page,
    pageSize,
    hasNext: start + pageSize < all.length,
  };
}

/** `path?query` of page `page`; later pages carry an opaque PageToken, as Twilio's do. */
function pageLink(path: string, filters: Record<string, string>, pageSize: number, page: number) {
  const query = new URLSearchParams({ ...filters, PageSize: String(pageSize), Page: String(page) });
  if (page > 0) query.set('PageToken', twilioSid('PA', page));
  return `${path}?${query.toString()}`;
}

/** The v2010 envelope: links relative to the host, paging fields at the top. */
function v2010Envelope<T>(
  key: string,
  path: string,
  filters: Record<string, string>,
  page: Page<unknown>,
  items: T[],
) {
  const link = (n: number) => pageLink(path, filters, page.pageSize, n);
  const start = page.page * page.pageSize;
  return {
    first_page_uri: link(0),
    end: Math.max(start, start + items.length - 1),
    previous_page_uri: page.page > 0 ? link(page.page - 1) : null,
    [key]: items,
    uri: link(page.page),
    page_size: page.pageSize,
    start,
    next_page_uri: page.hasNext ? link(page.page + 1) : null,
    page: page.page,
  };
}

/** The v1 envelope: absolute links inside `meta`. */
function v1Envelope<T>(
  baseUrl: string,
  key: string,
  path: string,
  page: Page<unknown>,
  items: T[],
) {
  const link = (n: number) => `${baseUrl}${pageLink(path, {}, page.pageSize, n)}`;
  return {
    [key]: items,
    meta: {
      page: page.page,
      page_size: page.pageSize,
      first_page_url: link(0),
      previous_page_url: page.page > 0 ? link(page.page - 1) : null,
      url: link(page.page),
      next_page_url: page.hasNext ? link(page.page + 1) : null,
      key,
    },
  };
}

/** Twilio's PhoneNumber filter: a partial number, `*` matching any digit. */
function matchesPhoneFilter(phoneNumber: string, filter: string | null): boolean {
  if (!filter) return true;
  const digits = filter.replace(/^\+/, '').replace(/[^0-9*]/g, '');
  return new RegExp(digits.replace(/\*/g, '[0-9]')).test(phoneNumber.replace(/^\+/, ''));
}

function isAuthorized(header: string | undefined, accountSid: string, authToken: string) {
  if (!header?.startsWith('Basic ')) return false;
  const decoded = Buffer.from(header.slice('Basic '.length), 'base64').toString('utf8');
  return decoded === `${accountSid}:${authToken}`;
}

export async function startFakeTwilio(options: FakeTwilioOptions): Promise<FakeTwilio> {
  const { accountSid, authToken, data } = options;
  const behaviour: FakeTwilioBehaviour = {
    maxPageSize: options.maxPageSize ?? MAX_PAGE_SIZE,
    delayMs: options.delayMs ?? 0,
    delayPath: options.delayPath ?? null,
    failure: options.failure ?? null,
  };
  const requests: string[] = [];
  const pendingAnswers = new Set<NodeJS.Timeout>();
  let baseUrl = '';

  const incomingNumberJson = (number: FakeIncomingNumber) => ({
    account_sid: accountSid,
    address_requirements: 'none',
    address_sid: null,
    api_version: '2010-04-01',
    beta: false,
    bundle_sid: null,
    capabilities: { fax: false, mms: true, sms: true, voice: true },
    date_created: CREATED_RFC2822,
    date_updated: CREATED_RFC2822,
    emergency_address_sid: null,
    emergency_address_status: 'unregistered',
    emergency_status: 'Active',
    friendly_name: number.phoneNumber,
    identity_sid: null,
    origin: 'twilio',
    phone_number: number.phoneNumber,
    sid: number.sid,
    sms_application_sid: '',
    sms_fallback_method: 'POST',
    sms_fallback_url: '',
    sms_method: 'POST',
    sms_url: '',
    status: 'in-use',
    status_callback: '',
    status_callback_method: 'POST',
    subresource_uris: {
      assigned_add_ons: `/2010-04-01/Accounts/${accountSid}/IncomingPhoneNumbers/${number.sid}/AssignedAddOns.json`,
    },
    trunk_sid: null,
    uri: `/2010-04-01/Accounts/${accountSid}/IncomingPhoneNumbers/${number.sid}.json`,
    voice_application_sid: null,
    voice_caller_id_lookup: false,
    voice_fallback_method: 'POST',
    voice_fallback_url: null,
    voice_method: 'POST',
    voice_receive_mode: 'voice',
    voice_url: null,
  });

  const serviceJson = (service: FakeMessagingService) => {
    const url = `${baseUrl}/v1/Services/${service.sid}`;
    return {
      account_sid: accountSid,
      area_code_geomatch: true,
      date_created: CREATED_ISO,
      date_updated: CREATED_ISO,
      fallback_method: 'POST',
      fallback_to_long_code: true,
      fallback_url: null,
      friendly_name: `Service ${service.sid.slice(-4)}`,
      inbound_method: 'POST',
      inbound_request_url: null,
      mms_converter: true,
      scan_message_content: 'inherit',
      sid: service.sid,
      smart_encoding: true,
      status_callback: null,
      sticky_sender: true,
      synchronous_validation: true,
      url,
      us_app_to_person_registered: data.campaigns.some((c) => c.serviceSid === service.sid),
      use_inbound_webhook_on_number: false,
      usecase: 'marketing',
      validity_period: 14400,
      links: {
        alpha_senders: `${url}/AlphaSenders`,
        channel_senders: `${url}/ChannelSenders`,
        phone_numbers: `${url}/PhoneNumbers`,
        short_codes: `${url}/ShortCodes`,
        us_app_to_person: `${url}/Compliance/Usa2p`,
        us_app_to_person_usecases: `${url}/Compliance/Usa2p/Usecases`,
      },
    };
  };

  const serviceNumberJson = (serviceSid: string, number: FakeIncomingNumber) => ({
    account_sid: accountSid,
    capabilities: ['SMS', 'MMS', 'Voice'],
    country_code: 'US',
    date_created: CREATED_ISO,
    date_updated: CREATED_ISO,
    phone_number: number.phoneNumber,
    service_sid: serviceSid,
    sid: number.sid,
    url: `${baseUrl}/v1/Services/${serviceSid}/PhoneNumbers/${number.sid}`,
  });

  const campaignJson = (campaign: FakeCampaign) => ({
    account_sid: accountSid,
    age_gated: false,
    brand_registration_sid: campaign.brandSid,
    campaign_id: `C${campaign.sid.slice(-6).toUpperCase()}`,
    campaign_status: campaign.status,
    date_created: CREATED_ISO,
    date_updated: CREATED_ISO,
    description: 'Send marketing messages about sales and offers to opted-in customers.',
    direct_lending: false,
    errors: [],
    has_embedded_links: true,
    has_embedded_phone: false,
    help_keywords: ['HELP'],
    help_message: 'Reply STOP to unsubscribe. Msg&Data Rates May Apply.',
    is_externally_registered: false,
    message_flow: 'End users opt in by visiting www.example.com and adding their phone number.',
    message_samples: ['EXPRESS: Denim Days Event is ON', 'LAST CHANCE: Denim Days ends today'],
    messaging_service_sid: campaign.serviceSid,
    mock: campaign.mock ?? false,
    opt_in_keywords: ['START'],
    opt_in_message: 'Acme Corporation: You are now opted-in. Reply HELP for help, STOP to stop.',
    opt_out_keywords: ['STOP'],
    opt_out_message:
      'You have successfully been unsubscribed. You will not receive any more messages.',
    rate_limits: { att: { mps: 600, msg_class: 'A' }, tmobile: { brand_tier: 'TOP' } },
    sid: campaign.sid,
    subscriber_opt_in: true,
    url: `${baseUrl}/v1/Services/${campaign.serviceSid}/Compliance/Usa2p/${campaign.sid}`,
    us_app_to_person_usecase: 'MARKETING',
  });

  const brandJson = (brand: FakeBrand) => ({
    a2p_profile_bundle_sid: twilioSid('BU', 2),
    account_sid: accountSid,
    brand_feedback: null,
    brand_score: 42,
    brand_type: 'STANDARD',
    customer_profile_bundle_sid: twilioSid('BU', 1),
    date_created: CREATED_ISO,
    date_updated: CREATED_ISO,
    errors: [],
    failure_reason: null,
    government_entity: false,
    identity_status: 'VERIFIED',
    links: {
      brand_registration_otps: `${baseUrl}/v1/a2p/BrandRegistrations/${brand.sid}/SmsOtp`,
      brand_vettings: `${baseUrl}/v1/a2p/BrandRegistrations/${brand.sid}/Vettings`,
    },
    mock: brand.mock ?? false,
    russell_3000: false,
    sid: brand.sid,
    skip_automatic_sec_vet: false,
    status: brand.status,
    tax_exempt_status: null,
    tcr_id: `B${brand.sid.slice(-6).toUpperCase()}`,
    url: `${baseUrl}/v1/a2p/BrandRegistrations/${brand.sid}`,
  });

  /** Status and body for a request that passed authentication. */
  function route(path: string, query: URLSearchParams): [number, unknown] {
    const notFound: [number, unknown] = [
      404,
      errorBody(404, `The requested resource ${path} was not found`),
    ];
    const incoming = path.match(/^\/2010-04-01\/Accounts\/([^/]+)\/IncomingPhoneNumbers\.json$/);
    if (incoming) {
      if (incoming[1] !== accountSid) return notFound;
      const filter = query.get('PhoneNumber');
      const matching = data.incomingNumbers.filter((n) =>
        matchesPhoneFilter(n.phoneNumber, filter),
      );
      const page = pageOf(matching, query, behaviour.maxPageSize);
      const filters: Record<string, string> = filter ? { PhoneNumber: filter } : {};
      return [
        200,
        v2010Envelope(
          'incoming_phone_numbers',
          path,
          filters,
          page,
          page.items.map(incomingNumberJson),
        ),
      ];
    }
    if (path === '/v1/Services') {
      const page = pageOf(data.services, query, behaviour.maxPageSize);
      return [200, v1Envelope(baseUrl, 'services', path, page, page.items.map(serviceJson))];
    }
    const serviceNumbers = path.match(/^\/v1\/Services\/([^/]+)\/PhoneNumbers$/);
    if (serviceNumbers) {
      const service = data.services.find((s) => s.sid === serviceNumbers[1]);
      if (!service) return notFound;
      const numbers = service.numberSids.flatMap((sid) =>
        data.incomingNumbers.filter((n) => n.sid === sid),
      );
      const page = pageOf(numbers, query, behaviour.maxPageSize);
      const items = page.items.map((n) => serviceNumberJson(service.sid, n));
      return [200, v1Envelope(baseUrl, 'phone_numbers', path, page, items)];
    }
    const compliance = path.match(/^\/v1\/Services\/([^/]+)\/Compliance\/Usa2p$/);
    if (compliance) {
      if (!data.services.some((s) => s.sid === compliance[1])) return notFound;
      const campaigns = data.campaigns.filter((c) => c.serviceSid === compliance[1]);
      const page = pageOf(campaigns, query, behaviour.maxPageSize);
      return [200, v1Envelope(baseUrl, 'compliance', path, page, page.items.map(campaignJson))];
    }
    if (path === '/v1/a2p/BrandRegistrations') {
      const page = pageOf(data.brands, query, behaviour.maxPageSize);
      return [200, v1Envelope(baseUrl, 'data', path, page, page.items.map(brandJson))];
    }
    return notFound;
  }

  function answer(request: IncomingMessage, response: ServerResponse): [number, unknown] {
    const url = new URL(request.url ?? '/', baseUrl);
    requests.push(`${url.pathname}${url.search}`);
    if (request.method !== 'GET') return [405, errorBody(405)];
    if (!isAuthorized(request.headers.authorization, accountSid, authToken)) {
      response.setHeader('WWW-Authenticate', 'Basic realm="Twilio API"');
      return [401, errorBody(401)];
    }
    const { failure } = behaviour;
    if (failure && (!failure.path || failure.path.test(url.pathname))) {
      return [failure.status, errorBody(failure.status)];
    }
    return route(url.pathname, url.searchParams);
  }

  const server = createServer((request, response) => {
    const [status, body] = answer(request, response);
    const send = () => {
      response.writeHead(status, { 'Content-Type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    const { delayMs, delayPath } = behaviour;
    const path = new URL(request.url ?? '/', baseUrl).pathname;
    if (delayMs <= 0 || (delayPath && !delayPath.test(path))) return send();
    const timer = setTimeout(() => {
      pendingAnswers.delete(timer);
      if (!response.destroyed) send();
    }, delayMs);
    pendingAnswers.add(timer);
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    baseUrl,
    accountSid,
    authToken,
    data,
    behaviour,
    requests,
    close: () =>
      new Promise((resolve, reject) => {
        for (const timer of pendingAnswers) clearTimeout(timer);
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

export interface TwilioChannelOptions {
  accountSid: string;
  authToken: string;
  /** Where both of the channel's Twilio APIs are reached (a fake's baseUrl). */
  baseUrl: string;
  timeoutMs: number;
  numbers: string[];
}

/** A `twilio` telephony channel as a records file (`agentline load`) spells it. */
export function twilioChannelRecord(name: string, channel: TwilioChannelOptions) {
  return {
    name,
    kind: 'telephony' as const,
    provider: 'twilio' as const,
    provider_config: {
      account_sid: channel.accountSid,
      api_base_url: channel.baseUrl,
      messaging_base_url: channel.baseUrl,
      timeout_ms: channel.timeoutMs,
    },
    provider_secret: channel.authToken,
    numbers: channel.numbers,
  };
}
