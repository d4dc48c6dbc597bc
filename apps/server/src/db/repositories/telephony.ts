// Telephony channels, their incoming numbers and the provider records of the embedded `records`
// provider. Every read is scoped to one organization: another organization's channel, number or
// messaging service reads exactly like one that does not exist.

import { and, asc, eq } from 'drizzle-orm';
import type { MessagingPath } from '../../domain/a2p.js';
import type { Db } from '../client.js';
import {
  a2pBrands,
  a2pCampaigns,
  channels,
  messagingServiceNumbers,
  messagingServices,
  telephonyNumbers,
  type JsonObject,
  type TelephonyProvider as TelephonyProviderName,
} from '../schema.js';

export interface TelephonyChannel {
  id: number;
  provider: TelephonyProviderName;
  providerConfig: JsonObject | null;
  /** The provider credential: hand it to the provider, never to a response or a log line. */
  providerSecret: string | null;
}

/** The organization's telephony channel with this id, or null (also for other kinds of channel). */
export async function findTelephonyChannel(
  db: Db,
  organizationId: number,
  channelId: number,
): Promise<TelephonyChannel | null> {
  const row = db.orm
    .select({
      id: channels.id,
      provider: channels.provider,
      providerConfig: channels.providerConfig,
      providerSecret: channels.providerSecret,
    })
    .from(channels)
    .where(
      and(
        eq(channels.id, channelId),
        eq(channels.organizationId, organizationId),
        eq(channels.kind, 'telephony'),
      ),
    )
    .get();
  // The schema lets a telephony channel name no provider; the embedded one is the default.
  return row ? { ...row, provider: row.provider ?? 'records' } : null;
}

export async function isIncomingNumberOfChannel(
  db: Db,
  organizationId: number,
  channelId: number,
  phoneNumber: string,
): Promise<boolean> {
  const row = db.orm
    .select({ id: telephonyNumbers.id })
    .from(telephonyNumbers)
    .where(
      and(
        eq(telephonyNumbers.organizationId, organizationId),
        eq(telephonyNumbers.channelId, channelId),
        eq(telephonyNumbers.phoneNumber, phoneNumber),
      ),
    )
    .get();
  return row !== undefined;
}

/** The messaging path of a number as the operator loaded it (the `records` provider). */
export async function readRecordedMessagingPath(
  db: Db,
  organizationId: number,
  phoneNumber: string,
): Promise<MessagingPath> {
  const service = db.orm
    .select({ id: messagingServices.id, sid: messagingServices.sid })
    .from(messagingServiceNumbers)
    .innerJoin(
      messagingServices,
      eq(messagingServices.id, messagingServiceNumbers.messagingServiceId),
    )
    .where(
      and(
        eq(messagingServiceNumbers.organizationId, organizationId),
        eq(messagingServiceNumbers.phoneNumber, phoneNumber),
      ),
    )
    .get();
  if (!service) return { messagingService: null };

  const campaigns = db.orm
    .select({
      sid: a2pCampaigns.sid,
      status: a2pCampaigns.campaignStatus,
      mock: a2pCampaigns.isMock,
      brandSid: a2pBrands.sid,
      brandStatus: a2pBrands.status,
    })
    .from(a2pCampaigns)
    .leftJoin(
      a2pBrands,
      and(eq(a2pBrands.id, a2pCampaigns.brandId), eq(a2pBrands.organizationId, organizationId)),
    )
    .where(
      and(
        eq(a2pCampaigns.organizationId, organizationId),
        eq(a2pCampaigns.messagingServiceId, service.id),
      ),
    )
    .orderBy(asc(a2pCampaigns.id))
    .all();

  return {
    messagingService: {
      sid: service.sid,
      campaigns: campaigns.map((campaign) => ({
        sid: campaign.sid,
        status: campaign.status,
        mock: campaign.mock,
        brand:
          campaign.brandSid === null || campaign.brandStatus === null
            ? null
            : { sid: campaign.brandSid, status: campaign.brandStatus },
      })),
    },
  };
}
