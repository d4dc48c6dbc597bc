import type { Db } from '../../db/engine/client.js';
import {
  findTelephonyChannel,
  isIncomingNumberOfChannel,
  type TelephonyChannel,
} from '../../db/repositories/telephony.js';
import { a2pStatusList, checkA2p } from '../../domain/a2p.js';
import { RecordNotFoundError } from '../../domain/errors.js';
import { pagingOnly } from '../../domain/list-query.js';
import type { AppRouteHandler } from '../../http/router.js';
import { a2pStatusPage, readMessagingPath } from '../../providers/channel-provider.js';
import { readPage } from '../list-page.js';
import type * as routes from './telephony.routes.js';
import { toWireA2pVerdict } from '../../wire/telephony.js';

async function telephonyChannelOf(
  db: Db,
  organizationId: number,
  channelId: number,
): Promise<TelephonyChannel> {
  const channel = await findTelephonyChannel(db, organizationId, channelId);
  if (!channel) {
    throw new RecordNotFoundError(
      `No telephony channel with id ${channelId} in this organization; check the channel id.`,
    );
  }
  return channel;
}

export const channelsTelephonyNumbersVerifyA2pCompliance: AppRouteHandler<
  typeof routes.channelsTelephonyNumbersVerifyA2pCompliance
> = async (c) => {
  const { channel_id: channelId } = c.req.valid('param');
  const { phone } = c.req.valid('json');
  const db = c.get('db');
  const { organizationId } = c.get('auth');

  const channel = await telephonyChannelOf(db, organizationId, channelId);
  if (!(await isIncomingNumberOfChannel(db, organizationId, channelId, phone))) {
    throw new RecordNotFoundError(
      `${phone} is not an incoming number of telephony channel ${channelId}; send the number in E.164 exactly as the channel lists it.`,
    );
  }

  const path = await readMessagingPath(channel, db, organizationId, phone);
  if (path === null) {
    throw new RecordNotFoundError(
      `The ${channel.provider} account of telephony channel ${channelId} holds no incoming number ${phone}; the number must be an incoming number in that account.`,
    );
  }
  return c.json(toWireA2pVerdict(checkA2p(path)), 200);
};

export const channelsTelephonyNumbersA2pStatus: AppRouteHandler<
  typeof routes.channelsTelephonyNumbersA2pStatus
> = async (c) => {
  const { channel_id: channelId } = c.req.valid('param');
  const db = c.get('db');
  const { organizationId } = c.get('auth');

  const channel = await telephonyChannelOf(db, organizationId, channelId);
  // The list pages like the others but has nothing to search, order by or narrow.
  const page = await readPage(
    c,
    pagingOnly(c.req.valid('query')),
    a2pStatusList(channelId),
    (db, organizationId, query) => a2pStatusPage(channel, db, organizationId, query),
    ({ phone, verdict }) => ({ phone, ...toWireA2pVerdict(verdict) }),
  );
  return c.json(page, 200);
};
