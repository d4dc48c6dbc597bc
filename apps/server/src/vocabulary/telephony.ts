// What a telephony provider knows about a number's US A2P registration, as the rule
// (domain/a2p.ts) reads it and the providers and the telephony repository hand it over, and the
// A2P status list's one property.

/** One of the carriers' registered brands. */
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

/** The one property of the A2P status list: its items come in phone order, and nothing else. */
export type A2pStatusProperty = 'phone';
