import type { RouteHandler } from '@hono/zod-openapi';
import {
  findTelephonyChannel,
  isIncomingNumberOfChannel,
} from '../../db/repositories/telephony.js';
import { checkA2p, type MessagingPath } from '../../domain/a2p.js';
import { RecordNotFoundError } from '../../domain/errors.js';
import type { AppEnv } from '../../http/app-env.js';
import { ApiError } from '../../http/errors.js';
import { telephonyProviderOf } from '../../providers/channel-provider.js';
import { ProviderUnavailableError } from '../../providers/telephony-provider.js';
import type * as routes from './telephony.routes.js';
import { toWireA2pVerdict } from './telephony.wire.js';

export const channelsTelephonyNumbersVerifyA2pCompliance: RouteHandler<
  typeof routes.channelsTelephonyNumbersVerifyA2pCompliance,
  AppEnv
> = async (c) => {
  const { channel_id: channelId } = c.req.valid('param');
  const { phone } = c.req.valid('json');
  const db = c.get('db');
  const { organizationId } = c.get('auth');

  const channel = await findTelephonyChannel(db, organizationId, channelId);
  if (!channel) {
    throw new RecordNotFoundError(
      `No telephony channel with id ${channelId} in this organization; check the channel id.`,
    );
  }
  if (!(await isIncomingNumberOfChannel(db, organizationId, channelId, phone))) {
    throw new RecordNotFoundError(
      `${phone} is not an incoming number of telephony channel ${channelId}; send the number in E.164 exactly as the channel lists it.`,
    );
  }

  let path: MessagingPath | null;
  try {
    path = await telephonyProviderOf(channel, db, organizationId).readMessagingPath(phone);
  } catch (error) {
    if (!(error instanceof ProviderUnavailableError)) throw error;
    c.get('logger').warn(
      { channel_id: channelId, provider: channel.provider, problem: error.message },
      'telephony provider unavailable',
    );
    throw new ApiError(
      502,
      'PROVIDER_UNAVAILABLE',
      `The channel's telephony provider (${channel.provider}) could not answer: ${error.message}. Nothing was decided; try again, or ask an operator to check the channel's provider settings.`,
    );
  }
  if (path === null) {
    throw new RecordNotFoundError(
      `The ${channel.provider} account of telephony channel ${channelId} holds no incoming number ${phone}; the number must be an incoming number in that account.`,
    );
  }
  return c.json(toWireA2pVerdict(checkA2p(path)), 200);
};
