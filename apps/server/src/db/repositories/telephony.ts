// Telephony channels, their incoming numbers and the provider records of the embedded `records`
// provider. Every read is scoped to one organization: another organization's channel, number or
// messaging service reads exactly like one that does not exist. The reads are plain SQL that
// both backends run (portable-sql.ts); what they return differs only in how JSON and booleans
// arrive, which the row mapping below evens out.

import { sql } from 'drizzle-orm';
import type { MessagingPath } from '../../domain/a2p.js';
import type { Db } from '../client.js';
import { idEquals, parsedJson, runSteps, selectList, selectRows } from '../portable-sql.js';
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
  const [row] = await runSteps(db, () =>
    selectRows<{
      id: number;
      provider: TelephonyProviderName | null;
      providerConfig: JsonObject | string | null;
      providerSecret: string | null;
    }>(
      sql`SELECT ${selectList({
        id: channels.id,
        provider: channels.provider,
        providerConfig: channels.providerConfig,
        providerSecret: channels.providerSecret,
      })}
      FROM ${channels}
      WHERE ${idEquals(channels.id, channelId)} AND ${channels.organizationId} = ${organizationId}
        AND ${channels.kind} = 'telephony'`,
    ),
  );
  if (!row) return null;
  return {
    ...row,
    // The schema lets a telephony channel name no provider; the embedded one is the default.
    provider: row.provider ?? 'records',
    providerConfig: parsedJson<JsonObject | null>(row.providerConfig),
  };
}

export async function isIncomingNumberOfChannel(
  db: Db,
  organizationId: number,
  channelId: number,
  phoneNumber: string,
): Promise<boolean> {
  const rows = await runSteps(db, () =>
    selectRows(
      sql`SELECT 1 FROM ${telephonyNumbers}
      WHERE ${telephonyNumbers.organizationId} = ${organizationId}
        AND ${idEquals(telephonyNumbers.channelId, channelId)}
        AND ${telephonyNumbers.phoneNumber} = ${phoneNumber}`,
    ),
  );
  return rows.length > 0;
}

/** The messaging path of a number as the operator loaded it (the `records` provider). */
export async function readRecordedMessagingPath(
  db: Db,
  organizationId: number,
  phoneNumber: string,
): Promise<MessagingPath> {
  return runSteps(db, function* () {
    const [service] = yield* selectRows<{ id: number; sid: string }>(
      sql`SELECT ${selectList({ id: messagingServices.id, sid: messagingServices.sid })}
      FROM ${messagingServiceNumbers}
      JOIN ${messagingServices}
        ON ${messagingServices.id} = ${messagingServiceNumbers.messagingServiceId}
      WHERE ${messagingServiceNumbers.organizationId} = ${organizationId}
        AND ${messagingServiceNumbers.phoneNumber} = ${phoneNumber}`,
    );
    if (!service) return { messagingService: null };

    const campaigns = yield* selectRows<{
      sid: string;
      status: string;
      /** 0 or 1 on SQLite, a boolean on PostgreSQL. */
      mock: number | boolean;
      brandSid: string | null;
      brandStatus: string | null;
    }>(
      sql`SELECT ${selectList({
        sid: a2pCampaigns.sid,
        status: a2pCampaigns.campaignStatus,
        mock: a2pCampaigns.isMock,
        brandSid: a2pBrands.sid,
        brandStatus: a2pBrands.status,
      })}
      FROM ${a2pCampaigns}
      LEFT JOIN ${a2pBrands}
        ON ${a2pBrands.id} = ${a2pCampaigns.brandId}
        AND ${a2pBrands.organizationId} = ${organizationId}
      WHERE ${a2pCampaigns.organizationId} = ${organizationId}
        AND ${a2pCampaigns.messagingServiceId} = ${service.id}
      ORDER BY ${a2pCampaigns.id}`,
    );

    return {
      messagingService: {
        sid: service.sid,
        campaigns: campaigns.map((campaign) => ({
          sid: campaign.sid,
          status: campaign.status,
          mock: Boolean(campaign.mock),
          brand:
            campaign.brandSid === null || campaign.brandStatus === null
              ? null
              : { sid: campaign.brandSid, status: campaign.brandStatus },
        })),
      },
    };
  });
}
