// The A2P decision rule (docs/decisions.md sections 5 and 11) as tables, run through the pure
// rule: the acceptance scenarios fix `a2p_approved`, the combinations of the four conditions fix
// which check fails first, and each check says what it found and what to do.
// telephony-a2p-providers.test.ts runs the same tables through the API against both providers.

import { describe, expect, it } from 'vitest';
import { checkA2p } from '../src/domain/a2p.js';
import {
  CASES,
  CHECK_NAMES,
  COMBINATION_CASES,
  idsOf,
  messagingPathOf,
  SCENARIOS,
} from './support/a2p-scenarios.js';

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
