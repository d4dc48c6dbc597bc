// The US A2P rule of the telephony check (docs/decisions.md sections 5 and 11). Every telephony
// provider reads its records into a `MessagingPath` and this one function decides, so the
// embedded records and a live provider can never disagree about what "approved" means, nor about
// why a number is not.

import type { components } from '../spec-types.js';
import { everyValueOf } from '../vocabulary/spec-enums.js';
import type { A2pCampaign, A2pStatusProperty, MessagingPath } from '../vocabulary/telephony.js';
import type { ListResource, NullableKeys } from './list-query.js';

/** The provider's value for a campaign the carriers' registry has verified. */
export const VERIFIED_CAMPAIGN_STATUS = 'VERIFIED';

/** The provider's value for a brand the carriers' registry has approved. */
export const APPROVED_BRAND_STATUS = 'APPROVED';

/** One of the four checks, `{name, passed, detail}` as the answer carries it. */
export type A2pCheck = components['schemas']['A2pCheck'];
type A2pCheckName = A2pCheck['name'];

export interface A2pVerdict {
  /** True exactly when every check passed. */
  approved: boolean;
  checks: A2pCheck[];
}

// The statuses that mean "still under review": the fix is to wait, not to change anything.
const CAMPAIGN_STATUSES_UNDER_REVIEW = new Set(['PENDING', 'IN_PROGRESS']);
const BRAND_STATUSES_UNDER_REVIEW = new Set(['PENDING', 'IN_REVIEW']);
const REJECTED_STATUS = 'FAILED';

const isVerified = (campaign: A2pCampaign) =>
  !campaign.mock && campaign.status === VERIFIED_CAMPAIGN_STATUS;
const hasApprovedBrand = (campaign: A2pCampaign) =>
  campaign.brand?.status === APPROVED_BRAND_STATUS;

/** Why one campaign is not verified, and what to do about it. */
function unverifiedCampaign(campaign: A2pCampaign): string {
  if (campaign.mock) {
    return `${campaign.sid} is a mock (test) registration, which never carries traffic: register a real campaign`;
  }
  if (campaign.status === null) {
    return `${campaign.sid} has no status: look it up in the provider's console`;
  }
  if (CAMPAIGN_STATUSES_UNDER_REVIEW.has(campaign.status)) {
    return `${campaign.sid} is ${campaign.status}: the carriers are still reviewing it; check again once they have decided`;
  }
  if (campaign.status === REJECTED_STATUS) {
    return `${campaign.sid} is ${REJECTED_STATUS}: it was rejected; correct it as the provider's console explains and submit it again`;
  }
  return `${campaign.sid} is "${campaign.status}", which is not ${VERIFIED_CAMPAIGN_STATUS}: look it up in the provider's console`;
}

/** Why a verified campaign's own brand is not approved, and what to do about it. */
function unapprovedBrand(campaign: A2pCampaign): string {
  const { brand } = campaign;
  if (brand === null) {
    return `campaign ${campaign.sid} names no brand the provider has a record of: register the campaign under a brand`;
  }
  const owner = `brand ${brand.sid} of campaign ${campaign.sid}`;
  if (brand.status === null) return `${owner} has no status: look it up in the provider's console`;
  if (BRAND_STATUSES_UNDER_REVIEW.has(brand.status)) {
    return `${owner} is ${brand.status}: it is still being reviewed; check again once it is decided`;
  }
  if (brand.status === REJECTED_STATUS) {
    return `${owner} is ${REJECTED_STATUS}: it was rejected; correct the brand registration as the provider's console explains and submit it again`;
  }
  return `${owner} is "${brand.status}", which is not ${APPROVED_BRAND_STATUS}: look it up in the provider's console`;
}

const plural = (count: number, word: string) => (count === 1 ? word : `${word}s`);

/** The remaining checks, not reached because an earlier one failed. */
function notReached(names: readonly A2pCheckName[], reason: string): A2pCheck[] {
  return names.map((name) => ({ name, passed: null, detail: `Not checked: ${reason}.` }));
}

function verdict(checks: A2pCheck[]): A2pVerdict {
  return { approved: checks.every((check) => check.passed === true), checks };
}

/**
 * The four checks of a number's messaging path, in order, and the answer they add up to:
 * approved only when the number's service has a campaign that is verified, is not a mock, and
 * whose own brand is approved. The brand is read through the campaign on purpose: an approved
 * brand on some other registration says nothing about this one.
 *
 * `path` is null when the provider account holds no such incoming number (only a live provider
 * can say so), which fails the first check.
 */
export function checkA2p(path: MessagingPath | null): A2pVerdict {
  const service = path?.messagingService ?? null;
  if (service === null) {
    return verdict([
      {
        name: 'messaging_service',
        passed: false,
        detail:
          path === null
            ? "The channel's provider account holds no such incoming number: correct the channel's numbers, or its provider account."
            : 'The number is in no messaging service: add it to the sender pool of a messaging service that has a US A2P campaign.',
      },
      ...notReached(
        ['a2p_campaign', 'campaign_verified', 'brand_approved'],
        'the number is in no messaging service',
      ),
    ]);
  }
  const checks: A2pCheck[] = [
    {
      name: 'messaging_service',
      passed: true,
      detail: `The number is in messaging service ${service.sid}.`,
    },
  ];

  const { campaigns } = service;
  if (campaigns.length === 0) {
    return verdict([
      ...checks,
      {
        name: 'a2p_campaign',
        passed: false,
        detail: `Messaging service ${service.sid} has no US A2P campaign: register one for it, under a brand.`,
      },
      ...notReached(
        ['campaign_verified', 'brand_approved'],
        `messaging service ${service.sid} has no US A2P campaign`,
      ),
    ]);
  }
  checks.push({
    name: 'a2p_campaign',
    passed: true,
    detail: `Messaging service ${service.sid} has US A2P ${plural(campaigns.length, 'campaign')} ${campaigns.map((c) => c.sid).join(', ')}.`,
  });

  const verified = campaigns.filter(isVerified);
  if (verified.length === 0) {
    return verdict([
      ...checks,
      {
        name: 'campaign_verified',
        passed: false,
        detail: `No campaign of messaging service ${service.sid} is ${VERIFIED_CAMPAIGN_STATUS}: ${campaigns.map(unverifiedCampaign).join('; ')}.`,
      },
      ...notReached(
        ['brand_approved'],
        `no campaign of messaging service ${service.sid} is verified`,
      ),
    ]);
  }
  const approved = verified.find(hasApprovedBrand);
  // The campaign the last two checks speak of: the one that passes both, or the first verified.
  const campaign = approved ?? verified[0]!;
  checks.push({
    name: 'campaign_verified',
    passed: true,
    detail: `Campaign ${campaign.sid} is ${VERIFIED_CAMPAIGN_STATUS}.`,
  });

  if (approved) {
    return verdict([
      ...checks,
      {
        name: 'brand_approved',
        passed: true,
        detail: `Brand ${approved.brand!.sid} of campaign ${approved.sid} is ${APPROVED_BRAND_STATUS}.`,
      },
    ]);
  }
  // The case that is easiest to misread in the provider's console: the approved brand is there,
  // but on a registration that is not the verified one.
  const elsewhere = campaigns.find((other) => !isVerified(other) && hasApprovedBrand(other));
  const note = elsewhere
    ? ` (brand ${elsewhere.brand!.sid} is ${APPROVED_BRAND_STATUS}, but on campaign ${elsewhere.sid}, which is not verified: a brand counts only for its own campaign)`
    : '';
  return verdict([
    ...checks,
    {
      name: 'brand_approved',
      passed: false,
      detail: `The brand of the verified ${plural(verified.length, 'campaign')} is not ${APPROVED_BRAND_STATUS}: ${verified.map(unapprovedBrand).join('; ')}${note}.`,
    },
  ]);
}

/**
 * The A2P status list of one telephony channel's numbers (docs/decisions.md section 11). Its name
 * holds the channel, so a cursor given out for one channel is refused by another's list.
 */
export function a2pStatusList(channelId: number): ListResource<A2pStatusProperty> {
  return {
    name: `a2p_status:${channelId}`,
    kinds: { phone: 'exact' },
    alwaysIncluded: ['phone'],
    defaultOrder: { property: 'phone', direction: 'asc' },
    // No property of a number's status may be null (its item schema marks none nullable).
    nullable: everyValueOf<NullableKeys<components['schemas']['A2pNumberStatus']>>()([]),
    ids: 'integer',
  };
}
