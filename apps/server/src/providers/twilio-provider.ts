// Reads US A2P messaging paths live from Twilio's REST API with plain `fetch`: the account's
// numbers, its messaging services and their numbers, the services' campaigns and the account's
// brands, for a whole page of numbers at once (docs/architecture.md, "The Twilio provider").

import { z } from 'zod';
import type { A2pBrand, MessagingPath, MessagingServiceRecord } from '../vocabulary/telephony.js';
import type { JsonObject } from '../db/schema/sqlite.js';
import { ProviderUnavailableError, type TelephonyProvider } from './telephony-provider.js';

const TWILIO_API_BASE_URL = 'https://api.twilio.com';
const TWILIO_MESSAGING_BASE_URL = 'https://messaging.twilio.com';
const DEFAULT_TWILIO_TIMEOUT_MS = 5000;

// Twilio's maximum: the fewest round trips. Twilio may still answer with smaller pages.
const PAGE_SIZE = 1000;
// A provider that keeps linking to further pages must not hold a request open forever.
const MAX_PAGES = 200;

export interface TwilioSettings {
  accountSid: string;
  authToken: string;
  apiBaseUrl: string;
  messagingBaseUrl: string;
  /** Limit for each request to Twilio, in milliseconds. */
  timeoutMs: number;
}

const channelConfigSchema = z.looseObject({
  account_sid: z.string().min(1),
  api_base_url: z.url().optional(),
  messaging_base_url: z.url().optional(),
  timeout_ms: z.int().positive().optional(),
});

/** The settings of a twilio channel: provider_config plus the auth token in provider_secret. */
export function twilioSettingsOf(
  providerConfig: JsonObject | null,
  providerSecret: string | null,
): TwilioSettings {
  const config = channelConfigSchema.safeParse(providerConfig ?? {});
  if (!config.success) {
    throw new ProviderUnavailableError(
      "the channel's twilio settings are incomplete (provider_config needs account_sid, and base urls and timeout_ms must be valid); an operator must load them again",
    );
  }
  if (!providerSecret) {
    throw new ProviderUnavailableError(
      'the channel has no twilio auth token (provider_secret); an operator must load it',
    );
  }
  return {
    accountSid: config.data.account_sid,
    authToken: providerSecret,
    apiBaseUrl: config.data.api_base_url ?? TWILIO_API_BASE_URL,
    messagingBaseUrl: config.data.messaging_base_url ?? TWILIO_MESSAGING_BASE_URL,
    timeoutMs: config.data.timeout_ms ?? DEFAULT_TWILIO_TIMEOUT_MS,
  };
}

// Twilio marks nearly every field nullable; only what the check reads is required here.
const incomingNumberSchema = z.object({ phone_number: z.string() });
const serviceSchema = z.object({ sid: z.string() });
const serviceNumberSchema = z.object({ phone_number: z.string() });
const campaignSchema = z.object({
  sid: z.string(),
  brand_registration_sid: z.string().nullable(),
  campaign_status: z.string().nullable(),
  mock: z.boolean().nullable().optional(),
});
type TwilioCampaign = z.infer<typeof campaignSchema>;
const brandSchema = z.object({ sid: z.string(), status: z.string().nullable() });

/** A list page: v2010 puts the link at the top (`next_page_uri`), v1 in `meta.next_page_url`. */
const pageLinksSchema = z.object({
  next_page_uri: z.string().nullable().optional(),
  meta: z.object({ next_page_url: z.string().nullable().optional() }).optional(),
});

/**
 * A path, or a page link, as a URL on the configured base. Twilio's page links are relative to
 * its own hosts (v2010) or name them (v1); keeping only their path and query means the
 * credentials go nowhere but the configured base URL, and a proxy or a test server in front of
 * Twilio keeps working.
 */
function urlOnBase(baseUrl: string, pathOrLink: string): string {
  const { pathname, search } = new URL(pathOrLink, 'https://twilio.invalid');
  return `${baseUrl.replace(/\/+$/, '')}${pathname}${search}`;
}

function describeRefusal(status: number, body: unknown): string {
  if (status === 401 || status === 403) {
    return `the provider refused the channel's credentials (HTTP ${status}); an operator must update the channel's account_sid and auth token`;
  }
  if (status === 429) return 'the provider is limiting the rate of requests (HTTP 429)';
  if (status >= 500) return `the provider failed (HTTP ${status})`;
  // Twilio's numeric error code is safe to repeat and tells an operator where to look; its
  // message is not (it can quote the request path, which holds the account SID).
  const code = z.object({ code: z.int() }).safeParse(body);
  return `the provider rejected the request (HTTP ${status}${code.success ? `, Twilio error ${code.data.code}` : ''})`;
}

function jsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isTimeout(error: unknown): boolean {
  return error instanceof Error && error.name === 'TimeoutError';
}

export function createTwilioProvider(settings: TwilioSettings): TelephonyProvider {
  const authorization = `Basic ${Buffer.from(`${settings.accountSid}:${settings.authToken}`).toString('base64')}`;

  async function getJson(url: string): Promise<unknown> {
    try {
      const response = await fetch(url, {
        headers: { Authorization: authorization, Accept: 'application/json' },
        // A redirect is answered as a refusal rather than followed: nothing but the configured
        // base URL sees the credentials.
        redirect: 'manual',
        signal: AbortSignal.timeout(settings.timeoutMs),
      });
      const body = jsonOrUndefined(await response.text());
      if (!response.ok) throw new ProviderUnavailableError(describeRefusal(response.status, body));
      if (body === undefined) {
        throw new ProviderUnavailableError('the provider answered with a body that is not JSON');
      }
      return body;
    } catch (error) {
      if (error instanceof ProviderUnavailableError) throw error;
      if (isTimeout(error)) {
        throw new ProviderUnavailableError(
          `the provider did not answer within ${settings.timeoutMs} ms`,
        );
      }
      throw new ProviderUnavailableError('the provider could not be reached');
    }
  }

  function parse<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
    const parsed = schema.safeParse(value);
    if (!parsed.success) {
      throw new ProviderUnavailableError(`the provider answered with an unexpected ${what}`);
    }
    return parsed.data;
  }

  /** Every item of a list, page after page, fetched only as far as the caller reads. */
  async function* listItems<T>(
    baseUrl: string,
    path: string,
    key: string,
    itemSchema: z.ZodType<T>,
  ): AsyncGenerator<T> {
    let url: string | null = urlOnBase(baseUrl, path);
    for (let pages = 0; url !== null; pages += 1) {
      if (pages === MAX_PAGES) {
        throw new ProviderUnavailableError(`the provider listed more than ${MAX_PAGES} pages`);
      }
      const page = await getJson(url);
      const items = parse(z.object({ [key]: z.array(z.unknown()) }), page, `${key} page`)[key]!;
      for (const item of items) yield parse(itemSchema, item, `${key} item`);
      const links = parse(pageLinksSchema, page, `${key} page`);
      const next = links.meta?.next_page_url ?? links.next_page_uri ?? null;
      url = next === null ? null : urlOnBase(baseUrl, next);
    }
  }

  /** The account's incoming numbers among `wanted`, read until every one of them is found. */
  async function heldAmong(wanted: ReadonlySet<string>, filter?: string): Promise<Set<string>> {
    // The PhoneNumber filter also matches partial numbers, so the exact ones are picked here.
    const query = new URLSearchParams({
      ...(filter !== undefined && { PhoneNumber: filter }),
      PageSize: String(PAGE_SIZE),
    });
    const numbers = listItems(
      settings.apiBaseUrl,
      `/2010-04-01/Accounts/${encodeURIComponent(settings.accountSid)}/IncomingPhoneNumbers.json?${query.toString()}`,
      'incoming_phone_numbers',
      incomingNumberSchema,
    );
    const held = new Set<string>();
    for await (const number of numbers) {
      if (wanted.has(number.phone_number)) held.add(number.phone_number);
      if (held.size === wanted.size) break;
    }
    return held;
  }

  /** The service holding each of `wanted` that is in one, read until every one is placed. */
  async function servicesHolding(wanted: ReadonlySet<string>): Promise<Map<string, string>> {
    const serviceOf = new Map<string, string>();
    const services = listItems(
      settings.messagingBaseUrl,
      `/v1/Services?PageSize=${PAGE_SIZE}`,
      'services',
      serviceSchema,
    );
    for await (const service of services) {
      const numbers = listItems(
        settings.messagingBaseUrl,
        `/v1/Services/${encodeURIComponent(service.sid)}/PhoneNumbers?PageSize=${PAGE_SIZE}`,
        'phone_numbers',
        serviceNumberSchema,
      );
      for await (const number of numbers) {
        if (wanted.has(number.phone_number)) serviceOf.set(number.phone_number, service.sid);
        if (serviceOf.size === wanted.size) return serviceOf;
      }
    }
    return serviceOf;
  }

  async function readCampaigns(serviceSid: string): Promise<TwilioCampaign[]> {
    const campaigns: TwilioCampaign[] = [];
    for await (const campaign of listItems(
      settings.messagingBaseUrl,
      `/v1/Services/${encodeURIComponent(serviceSid)}/Compliance/Usa2p?PageSize=${PAGE_SIZE}`,
      'compliance',
      campaignSchema,
    )) {
      campaigns.push(campaign);
    }
    return campaigns;
  }

  async function readBrands(): Promise<Map<string, A2pBrand>> {
    const brands = new Map<string, A2pBrand>();
    for await (const brand of listItems(
      settings.messagingBaseUrl,
      `/v1/a2p/BrandRegistrations?PageSize=${PAGE_SIZE}`,
      'data',
      brandSchema,
    )) {
      brands.set(brand.sid, brand);
    }
    return brands;
  }

  /**
   * The messaging path of each number, as far as the messaging services know it: a number in
   * none of them gets `{messagingService: null}`, whether or not the account holds it.
   */
  async function readPaths(phones: readonly string[]): Promise<Map<string, MessagingPath>> {
    if (phones.length === 0) return new Map();
    const serviceOf = await servicesHolding(new Set(phones));
    const campaignsOf = new Map<string, TwilioCampaign[]>();
    for (const serviceSid of new Set(serviceOf.values())) {
      campaignsOf.set(serviceSid, await readCampaigns(serviceSid));
    }
    const namesBrand = [...campaignsOf.values()]
      .flat()
      .some((campaign) => campaign.brand_registration_sid !== null);
    const brands = namesBrand ? await readBrands() : new Map<string, A2pBrand>();
    const services = new Map(
      [...campaignsOf].map(([sid, campaigns]): [string, MessagingServiceRecord] => [
        sid,
        {
          sid,
          campaigns: campaigns.map((campaign) => ({
            sid: campaign.sid,
            status: campaign.campaign_status,
            mock: campaign.mock === true,
            brand:
              campaign.brand_registration_sid === null
                ? null
                : (brands.get(campaign.brand_registration_sid) ?? null),
          })),
        },
      ]),
    );
    return new Map(
      phones.map((phone) => {
        const serviceSid = serviceOf.get(phone);
        return [phone, { messagingService: serviceSid ? services.get(serviceSid)! : null }];
      }),
    );
  }

  return {
    name: 'twilio',
    async readMessagingPath(phone: string): Promise<MessagingPath | null> {
      // Filtered by the number: the account is asked about this one number only.
      if ((await heldAmong(new Set([phone]), phone)).size === 0) return null;
      return (await readPaths([phone])).get(phone)!;
    },
    async readMessagingPaths(phones: readonly string[]) {
      const paths = new Map<string, MessagingPath | null>(await readPaths(phones));
      // Only a number in no service may be one the account does not hold (a service's numbers
      // are the account's), so the account's numbers are read only when there is such a number.
      const unplaced = phones.filter((phone) => paths.get(phone)!.messagingService === null);
      if (unplaced.length > 0) {
        const held = await heldAmong(new Set(unplaced));
        for (const phone of unplaced) if (!held.has(phone)) paths.set(phone, null);
      }
      return paths;
    },
  };
}
