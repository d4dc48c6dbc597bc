// Which addresses a webhook may be sent to: the classification, the create-time URL check (with
// a stand-in resolver, so no test depends on the machine's DNS), and the connect-time lookup
// against a real listening socket on 127.0.0.1.

import { createServer, connect, type AddressInfo, type Server } from 'node:net';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkTargetUrl,
  literalHostRefusal,
  nonPublicKind,
  publicOnlyLookup,
  type ResolveHost,
} from '../src/domain/webhook-target-address.js';

const STRICT = { allowHttp: false, allowPrivateAddresses: false };
const OPEN = { allowHttp: true, allowPrivateAddresses: true };

describe('address classification', () => {
  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '2606:4700:4700::1111',
    '2a00:1450:4001:80b::200e',
    '::ffff:8.8.8.8',
  ])('%s is public', (address) => {
    expect(nonPublicKind(address)).toBeNull();
  });

  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.254', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['192.0.2.10', 'documentation'],
    ['198.51.100.10', 'documentation'],
    ['203.0.113.10', 'documentation'],
    ['240.0.0.1', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456::1', 'unique-local'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['2001:db8::1', 'documentation'],
    ['64:ff9b::a00:1', 'NAT64'],
    ['not-an-address', 'not an IP address'],
  ])('%s is not public (%s)', (address, kind) => {
    expect(nonPublicKind(address)).toContain(kind);
  });
});

describe('checkTargetUrl', () => {
  const resolvesTo =
    (...addresses: string[]): ResolveHost =>
    () =>
      Promise.resolve(
        addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
      );

  it('accepts an https URL whose host resolves only to public addresses', async () => {
    expect(
      await checkTargetUrl(
        'https://hooks.example.com/in',
        STRICT,
        resolvesTo('93.184.216.34', '2606:4700::1'),
      ),
    ).toBeNull();
  });

  it('refuses a host when any of its addresses is not public, naming the setting', async () => {
    const refusal = await checkTargetUrl(
      'https://hooks.example.com/in',
      STRICT,
      resolvesTo('93.184.216.34', '10.0.0.7'),
    );
    expect(refusal).toMatchObject({ rule: 'address' });
    expect(refusal!.message).toContain('hooks.example.com resolves to 10.0.0.7');
    expect(refusal!.message).toContain('private');
    expect(refusal!.message).toContain('WEBHOOK_ALLOW_PRIVATE_ADDRESSES=true');
  });

  it('refuses address literals that are not public, IPv6 and IPv4-mapped included', async () => {
    for (const url of [
      'https://127.0.0.1/x',
      'https://[::1]:8443/x',
      'https://[::ffff:192.168.0.1]/x',
      'https://169.254.169.254/latest/meta-data',
    ]) {
      expect(await checkTargetUrl(url, STRICT, resolvesTo())).toMatchObject({ rule: 'address' });
    }
    expect(await checkTargetUrl('https://8.8.8.8/x', STRICT, resolvesTo())).toBeNull();
  });

  it('refuses http unless WEBHOOK_ALLOW_HTTP, and other schemes always', async () => {
    const http = await checkTargetUrl('http://hooks.example.com/', STRICT, resolvesTo('8.8.8.8'));
    expect(http).toMatchObject({ rule: 'scheme' });
    expect(http!.message).toContain('WEBHOOK_ALLOW_HTTP=true');
    expect(
      await checkTargetUrl(
        'http://hooks.example.com/',
        { ...STRICT, allowHttp: true },
        resolvesTo('8.8.8.8'),
      ),
    ).toBeNull();
    const ftp = await checkTargetUrl('ftp://hooks.example.com/', OPEN);
    expect(ftp).toMatchObject({ rule: 'scheme' });
    expect(ftp!.message).toContain('not ftp');
  });

  it('refuses what is not a URL, and a host that does not resolve', async () => {
    expect(await checkTargetUrl('hooks.example.com/in', STRICT)).toMatchObject({ rule: 'url' });
    const failing: ResolveHost = () =>
      Promise.reject(Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' }));
    const refusal = await checkTargetUrl('https://nowhere.example.com/', STRICT, failing);
    expect(refusal).toMatchObject({ rule: 'resolution' });
    expect(refusal!.message).toContain('ENOTFOUND');
  });

  it('accepts private addresses with WEBHOOK_ALLOW_PRIVATE_ADDRESSES', async () => {
    expect(await checkTargetUrl('http://127.0.0.1:9999/hook', OPEN)).toBeNull();
    expect(literalHostRefusal('127.0.0.1', OPEN)).toBeNull();
    expect(literalHostRefusal('[::1]', STRICT)).toContain('loopback');
    expect(literalHostRefusal('localhost', STRICT)).toBeNull();
  });
});

describe('connect-time lookup', () => {
  let server: Server;
  let port: number;

  beforeAll(async () => {
    server = createServer((socket) => socket.end());
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const tryConnect = (lookup: ReturnType<typeof publicOnlyLookup>) =>
    new Promise<string>((resolve) => {
      const socket = connect({ host: 'localhost', port, family: 4, lookup });
      socket.once('connect', () => {
        socket.destroy();
        resolve('connected');
      });
      socket.once('error', (error: NodeJS.ErrnoException) =>
        resolve(`${error.code}: ${error.message}`),
      );
    });

  it('refuses a name that resolves to a loopback address', async () => {
    const outcome = await tryConnect(publicOnlyLookup(STRICT));
    expect(outcome).toMatch(/^ENONPUBLIC: localhost resolves to 127\.0\.0\.1, a loopback address/);
  });

  it('leaves lookups alone when private addresses are allowed', async () => {
    expect(publicOnlyLookup(OPEN)).toBeUndefined();
    expect(await tryConnect(undefined)).toBe('connected');
  });
});
