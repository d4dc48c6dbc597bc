// agentline list numbers: every telephony number of an organization (or of one channel) with its
// A2P status and the first check it fails, from the channel's provider: the embedded records, or
// the fake Twilio over HTTP.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createWorkspace, type TempWorkspace } from './fixtures/cli-harness.js';
import {
  startFakeTwilio,
  twilioChannelRecord,
  twilioSid,
  type FakeTwilio,
} from './support/fake-twilio.js';
import { anyString } from './support/matchers.js';

const ACCOUNT_SID = twilioSid('AC', 0xc11);
const AUTH_TOKEN = 'cli-numbers-auth-token-0123456789';
const SERVICE_SID = twilioSid('MG', 0xc11);
const CAMPAIGN_SID = twilioSid('QE', 0xc11);
const BRAND_SID = twilioSid('BN', 0xc11);

let workspace: TempWorkspace;
let twilio: FakeTwilio;
const channelIds: Record<string, string> = {};

/** The rows of a table's output, split on its column gaps, without the header. */
function rowsOf(stdout: string): string[][] {
  return stdout
    .trimEnd()
    .split('\n')
    .slice(1)
    .map((line) => line.split(/ {2,}/));
}

beforeAll(async () => {
  workspace = await createWorkspace();
  twilio = await startFakeTwilio({
    accountSid: ACCOUNT_SID,
    authToken: AUTH_TOKEN,
    data: {
      incomingNumbers: [
        { sid: twilioSid('PN', 1), phoneNumber: '+12125550101' },
        { sid: twilioSid('PN', 2), phoneNumber: '+12125550100' },
      ],
      services: [{ sid: SERVICE_SID, numberSids: [twilioSid('PN', 1), twilioSid('PN', 2)] }],
      campaigns: [
        { sid: CAMPAIGN_SID, serviceSid: SERVICE_SID, brandSid: BRAND_SID, status: 'VERIFIED' },
      ],
      brands: [{ sid: BRAND_SID, status: 'FAILED' }],
    },
  });
  const file = join(workspace.dir, 'records.json');
  writeFileSync(
    file,
    JSON.stringify({
      channels: [
        {
          name: 'Support line',
          kind: 'telephony',
          provider: 'records',
          numbers: ['+14155550102', '+14155550100', '+14155550101'],
        },
        twilioChannelRecord('Twilio line', {
          accountSid: ACCOUNT_SID,
          authToken: AUTH_TOKEN,
          baseUrl: twilio.baseUrl,
          // No test here makes the fake wait: a bound that a busy machine's CLI process cannot miss.
          timeoutMs: 10_000,
          numbers: ['+12125550101', '+12125550100'],
        }),
        { name: 'Chat', kind: 'web_chat' },
      ],
      messaging_services: [
        { sid: 'MG-support', name: 'SMS', numbers: ['+14155550100', '+14155550101'] },
      ],
      a2p_brands: [{ sid: 'BN-support', status: 'APPROVED' }],
      a2p_campaigns: [
        {
          sid: 'QE-support',
          messaging_service: 'MG-support',
          brand: 'BN-support',
          campaign_status: 'VERIFIED',
        },
      ],
    }),
  );
  for (const argv of [['org', 'create', 'Acme'], ['org', 'create', 'Globex'], ['migrate']]) {
    expect((await workspace.run(argv)).code).toBe(0);
  }
  expect((await workspace.run(['load', file, '--org', 'Acme'])).code).toBe(0);
  const channels = await workspace.run(['list', 'channels', '--org', 'Acme', '--json']);
  for (const channel of JSON.parse(channels.stdout) as Array<{ id: number; name: string }>) {
    channelIds[channel.name] = String(channel.id);
  }
});

afterAll(async () => {
  await twilio.close();
  workspace.remove();
});

beforeEach(() => {
  twilio.behaviour.failure = null;
  twilio.requests.length = 0;
});

describe('agentline list numbers', () => {
  it('shows every telephony number with its A2P status and the first check it fails', async () => {
    const result = await workspace.run(['list', 'numbers', '--org', 'Acme']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout.split('\n')[0]).toMatch(
      /^CHANNEL ID\s+PHONE\s+A2P\s+FAILING CHECK\s+DETAIL$/,
    );
    const support = channelIds['Support line']!;
    const line = channelIds['Twilio line']!;
    expect(rowsOf(result.stdout)).toEqual([
      [support, '+14155550100', 'approved', '-', '-'],
      [support, '+14155550101', 'approved', '-', '-'],
      [
        support,
        '+14155550102',
        'no',
        'messaging_service',
        'The number is in no messaging service: add it to the sender pool of a messaging service that has a US A2P campaign.',
      ],
      [
        line,
        '+12125550100',
        'no',
        'brand_approved',
        `The brand of the verified campaign is not APPROVED: brand ${BRAND_SID} of campaign ${CAMPAIGN_SID} is FAILED: it was rejected; correct the brand registration as the provider's console explains and submit it again.`,
      ],
      [line, '+12125550101', 'no', 'brand_approved', anyString()],
    ]);
    expect(result.stdout).not.toContain(ACCOUNT_SID);
  });

  it('narrows to one channel with --channel, and prints the checks with --json', async () => {
    const result = await workspace.run([
      'list',
      'numbers',
      '--org',
      'Acme',
      '--channel',
      channelIds['Twilio line']!,
      '--json',
    ]);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const numbers = JSON.parse(result.stdout) as Array<{
      channel_id: number;
      phone: string;
      a2p_approved: boolean;
      checks: Array<{ name: string; passed: boolean | null; detail: string }>;
    }>;
    expect(
      numbers.map(({ channel_id, phone, a2p_approved }) => [channel_id, phone, a2p_approved]),
    ).toEqual([
      [Number(channelIds['Twilio line']), '+12125550100', false],
      [Number(channelIds['Twilio line']), '+12125550101', false],
    ]);
    expect(numbers[0]!.checks.map((check) => [check.name, check.passed])).toEqual([
      ['messaging_service', true],
      ['a2p_campaign', true],
      ['campaign_verified', true],
      ['brand_approved', false],
    ]);
    // Both numbers from one bulk read: services, their numbers, campaigns, brands.
    expect(twilio.requests).toHaveLength(4);
  });

  it('lists nothing when a provider cannot answer, and says which channel and why', async () => {
    twilio.behaviour.failure = { status: 503 };
    const result = await workspace.run(['list', 'numbers', '--org', 'Acme']);
    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr: `agentline: the telephony provider (twilio) of channel ${channelIds['Twilio line']} could not answer: the provider failed (HTTP 503); nothing is listed — try again, check the channel's provider settings, or list another channel with --channel <id>\n`,
    });
    const others = await workspace.run([
      'list',
      'numbers',
      '--org',
      'Acme',
      '--channel',
      channelIds['Support line']!,
    ]);
    expect(rowsOf(others.stdout)).toHaveLength(3);
  });

  it('says when the organization has no numbers', async () => {
    const result = await workspace.run(['list', 'numbers', '--org', 'Globex']);
    expect(result).toMatchObject({ code: 0, stdout: '' });
    expect(result.stderr).toContain('organization "Globex" has no telephony numbers yet');
  });

  it.each([
    [
      'a channel that is not a telephony channel',
      () => ['list', 'numbers', '--org', 'Acme', '--channel', channelIds['Chat']!],
      1,
      /^agentline: the organization has no telephony channel with id \d+ — see its channels/,
    ],
    [
      "another organization's channel",
      () => ['list', 'numbers', '--org', 'Globex', '--channel', channelIds['Support line']!],
      1,
      /no telephony channel with id/,
    ],
    [
      'a --channel that is not an id',
      () => ['list', 'numbers', '--org', 'Acme', '--channel', 'Support line'],
      2,
      /^agentline: --channel must be a channel id \(a whole number from 1\), got "Support line"/,
    ],
    [
      '--channel on a list without channels',
      () => ['list', 'agents', '--org', 'Acme', '--channel', '1'],
      2,
      /^agentline: --channel does not apply to list agents — leave it out/,
    ],
  ])('refuses %s', async (_, argv, code, message) => {
    const result = await workspace.run(argv());
    expect(result.code).toBe(code);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(message);
  });
});
