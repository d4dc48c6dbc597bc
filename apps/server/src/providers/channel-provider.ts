// Picks the telephony provider a channel is set up with.

import type { Db } from '../db/client.js';
import type { TelephonyChannel } from '../db/repositories/telephony.js';
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
