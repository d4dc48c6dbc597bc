// The A2P check's answer as the API gives it (shapes from the spec's generated types).

import type { A2pVerdict } from '../domain/a2p.js';
import type { components } from '../spec-types.js';

export type WireA2pVerdict = components['schemas']['A2pMessagingPathCheckResponse'];

export const toWireA2pVerdict = (verdict: A2pVerdict): WireA2pVerdict => ({
  a2p_approved: verdict.approved,
  checks: verdict.checks,
});
