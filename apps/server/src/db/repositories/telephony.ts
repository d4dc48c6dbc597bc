// Telephony channels, their incoming numbers and the provider records of the embedded `records`
// provider. Every read is scoped to one organization: another organization's channel, number or
// messaging service reads exactly like one that does not exist. The reads are plain SQL that
// both backends run (portable-sql.ts); what they return differs only in how JSON and booleans
// arrive, which the row mapping below evens out.

import { sql } from 'drizzle-orm';
import type { A2pStatusProperty, MessagingPath } from '../../vocabulary/telephony.js';
import type { ListPosition, ListQuery } from '../../vocabulary/list-query.js';
import type { Db } from '../engine/client.js';
import { selectListPage, type ListTable } from '../engine/list-table.js';
import {
  idEquals,
  parsedJson,
  runListRead,
  runSteps,
  selectList,
  selectRows,
} from '../engine/portable-sql.js';
import {
  a2pBrands,
  a2pCampaigns,
  channels,
  messagingServiceNumbers,
  messagingServices,
  telephonyNumbers,
  type JsonObject,
  type TelephonyProvider as TelephonyProviderName,
} from '../schema/sqlite.js';

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

const CHANNEL_NUMBERS_LIST_TABLE: ListTable<A2pStatusProperty> = {
  from: sql`${telephonyNumbers}`,
  organizationColumn: telephonyNumbers.organizationId,
  primaryKey: telephonyNumbers.id,
  columns: { phone: telephonyNumbers.phoneNumber },
  fields: { id: telephonyNumbers.id, phone: telephonyNumbers.phoneNumber },
};

/** One page of a telephony channel's incoming numbers, in phone order. */
export async function listChannelNumbers(
  db: Db,
  organizationId: number,
  channelId: number,
  query: ListQuery<A2pStatusProperty>,
): Promise<{ phones: string[]; totalCount: number; next: ListPosition | null }> {
  const { rows, totalCount, next } = await runListRead(db, () =>
    selectListPage<A2pStatusProperty, { id: number; phone: string }>(
      CHANNEL_NUMBERS_LIST_TABLE,
      organizationId,
      query,
      db,
      idEquals(telephonyNumbers.channelId, channelId),
    ),
  );
  return { phones: rows.map((row) => row.phone), totalCount, next };
}

/**
 * The messaging paths of numbers as the operator loaded them (the `records` provider), in one
 * query whatever their count: each number's service with its campaigns and their brands.
 */
export async function readRecordedMessagingPaths(
  db: Db,
  organizationId: number,
  phoneNumbers: readonly string[],
): Promise<Map<string, MessagingPath>> {
  const rows =
    phoneNumbers.length === 0
      ? []
      : await runSteps(db, () =>
          selectRows<{
            phone: string;
            serviceSid: string;
            campaignSid: string | null;
            status: string | null;
            /** 0 or 1 on SQLite, a boolean on PostgreSQL; null without a campaign. */
            mock: number | boolean | null;
            brandSid: string | null;
            brandStatus: string | null;
          }>(
            sql`SELECT ${selectList({
              phone: messagingServiceNumbers.phoneNumber,
              serviceSid: messagingServices.sid,
              campaignSid: a2pCampaigns.sid,
              status: a2pCampaigns.campaignStatus,
              mock: a2pCampaigns.isMock,
              brandSid: a2pBrands.sid,
              brandStatus: a2pBrands.status,
            })}
            FROM ${messagingServiceNumbers}
            JOIN ${messagingServices}
              ON ${messagingServices.id} = ${messagingServiceNumbers.messagingServiceId}
            LEFT JOIN ${a2pCampaigns}
              ON ${a2pCampaigns.messagingServiceId} = ${messagingServices.id}
              AND ${a2pCampaigns.organizationId} = ${organizationId}
            LEFT JOIN ${a2pBrands}
              ON ${a2pBrands.id} = ${a2pCampaigns.brandId}
              AND ${a2pBrands.organizationId} = ${organizationId}
            WHERE ${messagingServiceNumbers.organizationId} = ${organizationId}
              AND ${messagingServiceNumbers.phoneNumber} IN (${sql.join(
                phoneNumbers.map((phone) => sql`${phone}`),
                sql`, `,
              )})
            ORDER BY ${messagingServiceNumbers.phoneNumber}, ${a2pCampaigns.id}`,
          ),
        );

  const paths = new Map<string, MessagingPath>(
    phoneNumbers.map((phone) => [phone, { messagingService: null }]),
  );
  for (const row of rows) {
    // A number is in at most one service of an organization (a unique constraint), so a number's
    // rows are its one service, once per campaign (once with nulls when it has none).
    const path = paths.get(row.phone)!;
    path.messagingService ??= { sid: row.serviceSid, campaigns: [] };
    if (row.campaignSid === null) continue;
    path.messagingService.campaigns.push({
      sid: row.campaignSid,
      status: row.status,
      mock: Boolean(row.mock),
      brand:
        row.brandSid === null || row.brandStatus === null
          ? null
          : { sid: row.brandSid, status: row.brandStatus },
    });
  }
  return paths;
}
