// Picks the telephony provider a channel is set up with, and asks it about the channel's numbers.

import type { Db } from '../db/client.js';
import { listChannelNumbers, type TelephonyChannel } from '../db/repositories/telephony.js';
import {
  checkA2p,
  type A2pStatusProperty,
  type A2pVerdict,
  type MessagingPath,
} from '../domain/a2p.js';
import type { ListPosition, ListQuery } from '../domain/list-query.js';
import { createRecordsProvider } from './records-provider.js';
import type { TelephonyProvider } from './telephony-provider.js';
import { createTwilioProvider, twilioSettingsOf } from './twilio-provider.js';

/** Throws ProviderUnavailableError when a twilio channel lacks usable settings. */
export function telephonyProviderOf(
  channel: TelephonyChannel,
  db: Db,
  organizationId: number,
): TelephonyProvider {
  switch (channel.provider) {
    case 'records':
      return createRecordsProvider(db, organizationId);
    case 'twilio':
      return createTwilioProvider(twilioSettingsOf(channel.providerConfig, channel.providerSecret));
  }
}

export interface NumberA2pStatus {
  phone: string;
  verdict: A2pVerdict;
}

/**
 * One page of the channel's A2P status list (docs/decisions.md section 11): its incoming numbers
 * in phone order, each with the A2P check, from one bulk read of the channel's provider. A page
 * without numbers asks the provider nothing. Throws ProviderUnavailableError when the provider
 * cannot answer for the whole page.
 */
export async function a2pStatusPage(
  channel: TelephonyChannel,
  db: Db,
  organizationId: number,
  query: ListQuery<A2pStatusProperty>,
): Promise<{ records: NumberA2pStatus[]; totalCount: number; next: ListPosition | null }> {
  const { phones, totalCount, next } = await listChannelNumbers(
    db,
    organizationId,
    channel.id,
    query,
  );
  const paths =
    phones.length === 0
      ? new Map<string, MessagingPath | null>()
      : await telephonyProviderOf(channel, db, organizationId).readMessagingPaths(phones);
  const records = phones.map((phone) => ({ phone, verdict: checkA2p(paths.get(phone) ?? null) }));
  return { records, totalCount, next };
}
