// The US A2P rule of the telephony check (docs/decisions.md section 5). Every telephony
// provider reads its records into a `MessagingPath` and this one function decides, so the
// embedded records and a live provider can never disagree about what "approved" means.

/** The provider's value for a campaign the carriers' registry has verified. */
export const VERIFIED_CAMPAIGN_STATUS = 'VERIFIED';

/** The provider's value for a brand the carriers' registry has approved. */
export const APPROVED_BRAND_STATUS = 'APPROVED';

export interface A2pBrand {
  sid: string;
  /** Null when the provider does not say. */
  status: string | null;
}

/** One US A2P registration (a campaign) of a messaging service. */
export interface A2pCampaign {
  sid: string;
  /** Null when the provider does not say. */
  status: string | null;
  /** A test registration that carries no traffic. */
  mock: boolean;
  /** The campaign's own brand; null when the provider has no record of it. */
  brand: A2pBrand | null;
}

export interface MessagingServiceRecord {
  sid: string;
  campaigns: A2pCampaign[];
}

/** What a provider knows about one incoming number: number -> service -> campaigns -> brands. */
export interface MessagingPath {
  /** The service holding the number (a number is in at most one); null when it is in none. */
  messagingService: MessagingServiceRecord | null;
}

/**
 * True only when the number's service has a campaign that is verified, is not a mock, and whose
 * own brand is approved. The brand is read through the campaign on purpose: an approved brand
 * on some other registration says nothing about this one.
 */
export function isA2pApproved({ messagingService }: MessagingPath): boolean {
  return (
    messagingService?.campaigns.some(
      (campaign) =>
        !campaign.mock &&
        campaign.status === VERIFIED_CAMPAIGN_STATUS &&
        campaign.brand?.status === APPROVED_BRAND_STATUS,
    ) ?? false
  );
}
