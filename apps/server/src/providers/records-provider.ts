// The embedded default: messaging services, US A2P campaigns and brands as the operator loaded
// them into Agentline's database (`agentline load`, `agentline demo`).

import type { Db } from '../db/engine/client.js';
import { readRecordedMessagingPaths } from '../db/repositories/telephony.js';
import type { TelephonyProvider } from './telephony-provider.js';

export function createRecordsProvider(db: Db, organizationId: number): TelephonyProvider {
  return {
    name: 'records',
    // The incoming numbers of a records channel are its telephony_numbers rows, which the caller
    // has already matched, so every number asked about here is one the provider holds.
    readMessagingPath: async (phone) =>
      (await readRecordedMessagingPaths(db, organizationId, [phone])).get(phone)!,
    readMessagingPaths: (phones) => readRecordedMessagingPaths(db, organizationId, phones),
  };
}
