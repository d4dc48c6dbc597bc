// Where a webhook may be sent: an https URL whose host is, and resolves only to, public unicast
// addresses. A receiver URL is chosen by a tenant, so without this rule the server could be made
// to post to its own loopback, its cloud's metadata address (169.254.169.254) or the private
// network behind it. The rule is checked twice: when an endpoint is created or changed (a clear
// 422), and again on every connection against the address actually connected to, so a name that
// resolved to a public address at create and to a private one later (DNS rebinding) is refused.
// Tests and local development turn it off with WEBHOOK_ALLOW_PRIVATE_ADDRESSES (and allow plain
// http with WEBHOOK_ALLOW_HTTP).

import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

export interface TargetAddressSettings {
  /** WEBHOOK_ALLOW_HTTP: plain http URLs are accepted too. */
  allowHttp: boolean;
  /** WEBHOOK_ALLOW_PRIVATE_ADDRESSES: loopback, private and other non-public addresses too. */
  allowPrivateAddresses: boolean;
}

/** What ipaddr.js calls each range that is not public, as a sentence says it. */
const RANGE_NAMES: Record<string, string> = {
  unspecified: 'the unspecified address',
  broadcast: 'the broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address',
  loopback: 'a loopback address',
  carrierGradeNat: 'a carrier-grade NAT address',
  private: 'a private address',
  uniqueLocal: 'a unique-local address',
  reserved: 'a reserved or documentation address',
  benchmarking: 'a benchmarking address',
  ipv4Mapped: 'an IPv4-mapped address',
  rfc6145: 'an IPv4-translated address',
  rfc6052: 'a NAT64 address',
  '6to4': 'a 6to4 address',
  teredo: 'a Teredo address',
};

/**
 * What kind of non-public address `address` is ("a loopback address"), or null when it is a
 * public unicast address. An IPv4-mapped IPv6 address (::ffff:127.0.0.1) is judged as the IPv4
 * address it carries; anything that does not parse as an address is not public.
 */
export function nonPublicKind(address: string): string | null {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.process(address);
  } catch {
    return 'not an IP address';
  }
  const range = parsed.range();
  if (range === 'unicast') return null;
  return RANGE_NAMES[range] ?? `a special-purpose address (${range})`;
}

/** The host of a URL as an address or name, without the brackets of an IPv6 literal. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

const PRIVATE_SETTING = 'WEBHOOK_ALLOW_PRIVATE_ADDRESSES=true';

function addressProblem(host: string, address: string, kind: string): string {
  const resolved = host === address ? `${address} is` : `${host} resolves to ${address},`;
  return `${resolved} ${kind}: webhooks are sent to public addresses only (a server started with ${PRIVATE_SETTING}, for tests and local development, accepts others).`;
}

/** Why a create or update refuses a webhook URL: which rule, in words that say what to change. */
export interface TargetUrlRefusal {
  rule: 'url' | 'scheme' | 'address' | 'resolution';
  message: string;
}

export type ResolveHost = (host: string) => Promise<LookupAddress[]>;

const resolveAll: ResolveHost = (host) =>
  new Promise((resolve, reject) =>
    dnsLookup(host, { all: true, verbatim: true }, (error, addresses) =>
      error ? reject(error) : resolve(addresses),
    ),
  );

/**
 * Checks a webhook URL at create or update: its scheme, then its host's addresses (every one
 * the host resolves to must be public). Null when it may be used; otherwise the refusal.
 */
export async function checkTargetUrl(
  url: string,
  settings: TargetAddressSettings,
  resolve: ResolveHost = resolveAll,
): Promise<TargetUrlRefusal | null> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return {
      rule: 'url',
      message: 'url is not an absolute URL; send one such as https://example.com/webhooks.',
    };
  }
  if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && settings.allowHttp)) {
    const http = parsed.protocol === 'http:';
    return {
      rule: 'scheme',
      message: `url must use https${http ? '' : `, not ${parsed.protocol.slice(0, -1)}`} (a server started with WEBHOOK_ALLOW_HTTP=true, for tests and local development, accepts http too).`,
    };
  }
  if (settings.allowPrivateAddresses) return null;
  const host = hostOf(parsed);
  if (isIP(host) !== 0) {
    const kind = nonPublicKind(host);
    return kind ? { rule: 'address', message: addressProblem(host, host, kind) } : null;
  }
  let addresses: LookupAddress[];
  try {
    addresses = await resolve(host);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'no answer';
    return {
      rule: 'resolution',
      message: `the host ${host} of url could not be resolved (${code}); check the name, or try again if its DNS was briefly unavailable.`,
    };
  }
  for (const { address } of addresses) {
    const kind = nonPublicKind(address);
    if (kind) return { rule: 'address', message: addressProblem(host, address, kind) };
  }
  return null;
}

/** The error a delivery's connection fails with when its host is not public. */
export class NonPublicAddressError extends Error {
  override name = 'NonPublicAddressError';
  readonly code = 'ENONPUBLIC';
}

/**
 * Why a delivery may not connect to the IP literal `host` (net connects to a literal without a
 * lookup, so the lookup below never sees it); null when it may, or when `host` is a name.
 */
export function literalHostRefusal(host: string, settings: TargetAddressSettings): string | null {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  if (settings.allowPrivateAddresses || isIP(bare) === 0) return null;
  const kind = nonPublicKind(bare);
  return kind ? addressProblem(bare, bare, kind) : null;
}

/**
 * The connect-time lookup of deliveries (undici's `connect: { lookup }`): resolves as net's own
 * does, and fails the connection when any address is not public, so what is connected to is
 * what was checked. Undefined when non-public addresses are allowed (net's own lookup then).
 */
export function publicOnlyLookup(settings: TargetAddressSettings): LookupFunction | undefined {
  if (settings.allowPrivateAddresses) return undefined;
  return (hostname: string, options: LookupOptions, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      for (const { address } of addresses) {
        const kind = nonPublicKind(address);
        if (kind)
          return callback(
            new NonPublicAddressError(addressProblem(hostname, address, kind)),
            '',
            0,
          );
      }
      if (options.all) return callback(null, addresses);
      const [first] = addresses;
      if (!first)
        return callback(new NonPublicAddressError(`${hostname} resolved to no address.`), '', 0);
      return callback(null, first.address, first.family);
    });
  };
}
