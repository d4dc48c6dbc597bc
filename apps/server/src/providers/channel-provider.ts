// Picks the telephony provider a channel is set up with, and asks it about the channel's numbers.

import type { Db } from '../db/client.js';
import type { TelephonyChannel } from '../db/repositories/telephony.js';
import { checkA2p, type A2pVerdict } from '../domain/a2p.js';
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

/**
 * The A2P verdict of each of `phones`, incoming numbers of the channel, in their order: one bulk
 * read of the channel's provider (a page of the A2P status list). A page without numbers asks the
 * provider nothing. Throws ProviderUnavailableError when the provider cannot answer for all.
 */
export async function a2pVerdictsOf(
  channel: TelephonyChannel,
  db: Db,
  organizationId: number,
  phones: readonly string[],
): Promise<A2pVerdict[]> {
  if (phones.length === 0) return [];
  const provider = telephonyProviderOf(channel, db, organizationId);
  const paths = await provider.readMessagingPaths(phones);
  return phones.map((phone) => checkA2p(paths.get(phone) ?? null));
}
