// Picks the telephony provider a channel is set up with, and asks it about the channel's numbers.

import type { Db } from '../db/engine/client.js';
import { listChannelNumbers, type TelephonyChannel } from '../db/repositories/telephony.js';
import type { A2pStatusProperty, MessagingPath } from '../vocabulary/telephony.js';
import type { ListedPage, ListQuery } from '../vocabulary/list-query.js';
import { checkA2p, type A2pVerdict } from '../domain/a2p.js';
import { createRecordsProvider } from './records-provider.js';
import { ProviderUnavailableError, type TelephonyProvider } from './telephony-provider.js';
import { createTwilioProvider, twilioSettingsOf } from './twilio-provider.js';

/**
 * Runs `read` against the channel's provider; a ProviderUnavailableError it throws (no usable
 * settings, a timeout, a refusal) is given the channel's id and provider, which the API's one
 * onError answers as a 502 and the CLI prints.
 */
export async function askChannelProvider<T>(
  channel: TelephonyChannel,
  read: () => Promise<T>,
): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof ProviderUnavailableError) {
      error.channel ??= { id: channel.id, provider: channel.provider };
    }
    throw error;
  }
}

/** Throws ProviderUnavailableError when a twilio channel lacks usable settings. */
function telephonyProviderOf(
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

/** The number's messaging path from the channel's provider, or null when it holds no such number. */
export function readMessagingPath(
  channel: TelephonyChannel,
  db: Db,
  organizationId: number,
  phone: string,
): Promise<MessagingPath | null> {
  return askChannelProvider(channel, () =>
    telephonyProviderOf(channel, db, organizationId).readMessagingPath(phone),
  );
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
): Promise<ListedPage<NumberA2pStatus>> {
  const { phones, totalCount, next } = await listChannelNumbers(
    db,
    organizationId,
    channel.id,
    query,
  );
  const paths =
    phones.length === 0
      ? new Map<string, MessagingPath | null>()
      : await askChannelProvider(channel, () =>
          telephonyProviderOf(channel, db, organizationId).readMessagingPaths(phones),
        );
  const records = phones.map((phone) => ({ phone, verdict: checkA2p(paths.get(phone) ?? null) }));
  return { records, totalCount, next };
}
