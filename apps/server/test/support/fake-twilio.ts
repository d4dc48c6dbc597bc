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
import {
  MAX_PAGE_SIZE,
  errorBody,
  pageOf,
  v1Envelope,
  v2010Envelope,
} from './fake-twilio-envelopes.js';
import {
  brandJson,
  campaignJson,
  incomingNumberJson,
  serviceJson,
  serviceNumberJson,
  type FakeTwilioData,
} from './fake-twilio-resources.js';

export { twilioSid, type FakeTwilioData } from './fake-twilio-resources.js';

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

  /** Status and body for a request that passed authentication. */
  function route(path: string, query: URLSearchParams): [number, unknown] {
    const account = { accountSid, baseUrl };
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
          page.items.map((number) => incomingNumberJson(account, number)),
        ),
      ];
    }
    if (path === '/v1/Services') {
      const page = pageOf(data.services, query, behaviour.maxPageSize);
      const items = page.items.map((s) => serviceJson(account, s, data.campaigns));
      return [200, v1Envelope(baseUrl, 'services', path, page, items)];
    }
    const serviceNumbers = path.match(/^\/v1\/Services\/([^/]+)\/PhoneNumbers$/);
    if (serviceNumbers) {
      const service = data.services.find((s) => s.sid === serviceNumbers[1]);
      if (!service) return notFound;
      const numbers = service.numberSids.flatMap((sid) =>
        data.incomingNumbers.filter((n) => n.sid === sid),
      );
      const page = pageOf(numbers, query, behaviour.maxPageSize);
      const items = page.items.map((n) => serviceNumberJson(account, service.sid, n));
      return [200, v1Envelope(baseUrl, 'phone_numbers', path, page, items)];
    }
    const compliance = path.match(/^\/v1\/Services\/([^/]+)\/Compliance\/Usa2p$/);
    if (compliance) {
      if (!data.services.some((s) => s.sid === compliance[1])) return notFound;
      const campaigns = data.campaigns.filter((c) => c.serviceSid === compliance[1]);
      const page = pageOf(campaigns, query, behaviour.maxPageSize);
      const items = page.items.map((c) => campaignJson(account, c));
      return [200, v1Envelope(baseUrl, 'compliance', path, page, items)];
    }
    if (path === '/v1/a2p/BrandRegistrations') {
      const page = pageOf(data.brands, query, behaviour.maxPageSize);
      const items = page.items.map((b) => brandJson(account, b));
      return [200, v1Envelope(baseUrl, 'data', path, page, items)];
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
