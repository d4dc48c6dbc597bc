// The A2P decision rule's tables (docs/decisions.md sections 5 and 11), for the rule's own tests
// and for both telephony providers (telephony-a2p-*.test.ts): the acceptance scenarios fix
// `a2p_approved`, the combinations of the four conditions fix which check fails first. Each
// scenario gets its own number, services, campaigns and brands, all in one account.

import type { MessagingPath } from '../../src/vocabulary/telephony.js';
import { twilioSid } from './fake-twilio.js';

interface Registration {
  campaignStatus: string;
  brandStatus: string;
  mock?: boolean;
}

interface Scenario {
  name: string;
  /** The registrations of the service holding the number; null: the number is in no service. */
  service: Registration[] | null;
  /** Registrations of a service of the same account that does not hold the number. */
  otherService?: Registration[];
  approved: boolean;
  /** `passed` of each check in order, where the table fixes it. */
  passed?: Array<boolean | null>;
}

const VERIFIED_APPROVED: Registration = { campaignStatus: 'VERIFIED', brandStatus: 'APPROVED' };

export const SCENARIOS: Scenario[] = [
  { name: 'verified campaign of an approved brand', service: [VERIFIED_APPROVED], approved: true },
  {
    name: 'two registrations, one verified with an approved brand',
    service: [{ campaignStatus: 'FAILED', brandStatus: 'APPROVED' }, VERIFIED_APPROVED],
    approved: true,
  },
  {
    name: 'verified campaign of a pending brand',
    service: [{ campaignStatus: 'VERIFIED', brandStatus: 'PENDING' }],
    approved: false,
  },
  {
    name: 'verified campaign of a brand in review',
    service: [{ campaignStatus: 'VERIFIED', brandStatus: 'IN_REVIEW' }],
    approved: false,
  },
  {
    name: 'verified campaign of a failed brand',
    service: [{ campaignStatus: 'VERIFIED', brandStatus: 'FAILED' }],
    approved: false,
  },
  {
    name: 'pending campaign of an approved brand',
    service: [{ campaignStatus: 'PENDING', brandStatus: 'APPROVED' }],
    approved: false,
  },
  {
    name: 'in-progress campaign of an approved brand',
    service: [{ campaignStatus: 'IN_PROGRESS', brandStatus: 'APPROVED' }],
    approved: false,
  },
  {
    name: 'failed campaign of an approved brand',
    service: [{ campaignStatus: 'FAILED', brandStatus: 'APPROVED' }],
    approved: false,
  },
  {
    name: 'mock campaign, verified, of an approved brand',
    service: [{ ...VERIFIED_APPROVED, mock: true }],
    approved: false,
  },
  {
    name: 'brand approved only on another registration of the same service',
    service: [
      { campaignStatus: 'VERIFIED', brandStatus: 'PENDING' },
      { campaignStatus: 'PENDING', brandStatus: 'APPROVED' },
    ],
    approved: false,
  },
  {
    name: "brand approved only on another service's registration",
    service: [{ campaignStatus: 'VERIFIED', brandStatus: 'PENDING' }],
    otherService: [VERIFIED_APPROVED],
    approved: false,
  },
  {
    name: 'number in no messaging service',
    service: null,
    otherService: [VERIFIED_APPROVED],
    approved: false,
  },
  { name: 'service with no registration', service: [], approved: false },
  {
    name: 'statuses in another case than the provider writes them',
    service: [{ campaignStatus: 'verified', brandStatus: 'approved' }],
    approved: false,
  },
];

/**
 * Every combination of the four conditions: the number is in a service, that service has a
 * campaign, the campaign is verified, its brand is approved. A condition that does not hold for
 * the number's own service still holds elsewhere in the account where it can (a campaign or an
 * approved brand on another service), so only the number's own path can decide. The checks run in
 * order and stop at the first that fails: the later ones are not reached (`passed: null`).
 */
const COMBINATIONS: Scenario[] = [false, true].flatMap((inService) =>
  [false, true].flatMap((hasCampaign) =>
    [false, true].flatMap((verified) =>
      [false, true].map((brandApproved): Scenario => {
        const registration: Registration = {
          campaignStatus: verified ? 'VERIFIED' : 'PENDING',
          brandStatus: brandApproved ? 'APPROVED' : 'IN_REVIEW',
        };
        const conditions = [inService, hasCampaign, verified, brandApproved];
        const firstFailure = conditions.indexOf(false);
        return {
          name: `in a service: ${inService}, campaign: ${hasCampaign}, verified: ${verified}, brand approved: ${brandApproved}`,
          service: inService ? (hasCampaign ? [registration] : []) : null,
          ...(!(inService && hasCampaign) && { otherService: [registration] }),
          approved: firstFailure === -1,
          passed: conditions.map((_, i) =>
            firstFailure === -1 || i < firstFailure ? true : i === firstFailure ? false : null,
          ),
        };
      }),
    ),
  ),
);

export const TABLE = [...SCENARIOS, ...COMBINATIONS];

/** Each scenario has its own number, services, campaigns and brands, all in one account. */
export function idsOf(index: number) {
  const n = index + 1;
  return {
    phone: `+1415555${String(1000 + n)}`,
    numberSid: twilioSid('PN', n),
    serviceSid: twilioSid('MG', n),
    otherServiceSid: twilioSid('MG', 1000 + n),
    campaignSid: (k: number) => twilioSid('QE', n * 100 + k),
    brandSid: (k: number) => twilioSid('BN', n * 100 + k),
  };
}

/** Registrations of one service as (campaign, brand) pairs with their sids. */
export function registrationsOf(index: number) {
  const ids = idsOf(index);
  const scenario = TABLE[index]!;
  const pairs = (serviceSid: string, registrations: Registration[], offset: number) =>
    registrations.map((registration, k) => ({
      ...registration,
      serviceSid,
      campaignSid: ids.campaignSid(offset + k),
      brandSid: ids.brandSid(offset + k),
    }));
  return [
    ...pairs(ids.serviceSid, scenario.service ?? [], 0),
    ...pairs(ids.otherServiceSid, scenario.otherService ?? [], 50),
  ];
}

export function servicesOf(index: number): Array<{ sid: string; holdsNumber: boolean }> {
  const ids = idsOf(index);
  const scenario = TABLE[index]!;
  return [
    ...(scenario.service ? [{ sid: ids.serviceSid, holdsNumber: true }] : []),
    ...(scenario.otherService ? [{ sid: ids.otherServiceSid, holdsNumber: false }] : []),
  ];
}

export function messagingPathOf(index: number): MessagingPath {
  const scenario = TABLE[index]!;
  if (scenario.service === null) return { messagingService: null };
  const ids = idsOf(index);
  return {
    messagingService: {
      sid: ids.serviceSid,
      campaigns: registrationsOf(index)
        .filter((r) => r.serviceSid === ids.serviceSid)
        .map((r) => ({
          sid: r.campaignSid,
          status: r.campaignStatus,
          mock: r.mock ?? false,
          brand: { sid: r.brandSid, status: r.brandStatus },
        })),
    },
  };
}

export const CASES = SCENARIOS.map((scenario, index) => ({ ...scenario, index }));
export const COMBINATION_CASES = COMBINATIONS.map((scenario, index) => ({
  ...scenario,
  index: SCENARIOS.length + index,
}));
export const CHECK_NAMES = [
  'messaging_service',
  'a2p_campaign',
  'campaign_verified',
  'brand_approved',
];
